#!/usr/bin/env bash
# install-runner.sh: set up the tuned self-hosted runner of bench.yml on Debian 12.
#   1. a system user for the runner (never root, no sudo)
#   2. the GitHub Actions runner, its tarball checked against RUNNER_SHA256
#   3. registration with the labels self-hosted,linux,x64,hft-tuned, as a systemd service
#   4. hft-tuning.service: setup_hft_system.sh --apply at every boot, before the runner;
#      root runs a copy in /usr/local/sbin, not the runner's checkout (which PR code can edit)
#   5. with --isolate CPUS: the boot-time tunings isolcpus / nohz_full / rcu_nocbs in
#      /etc/default/grub.d/hft-bench.cfg and update-grub (takes effect after a reboot);
#      with --server-cpus / --client-cpus: HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS in
#      the runner's .env, where every hftbench run, ab and calibrate of a job reads them
#
# Usage (as root):
#   RUNNER_TOKEN=<registration token> RUNNER_SHA256=<sha256 of the tarball> \
#     hft/runner/install-runner.sh --url https://github.com/OWNER/REPO [--name NAME]
#       [--version 2.x.y] [--user ghrunner] [--dir /opt/actions-runner]
#       [--isolate 2-7 --server-cpus 2-7 --client-cpus 8-27] [--dry-run]
# --dry-run prints every step and changes nothing (no root needed). The token is read from
# the environment so it never shows in `ps` or in the printed steps.
set -euo pipefail
PROG=install-runner.sh
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

URL="" NAME=$(hostname -s) VERSION=2.329.0 RUNNER_USER=ghrunner DIR=/opt/actions-runner
ISOLATE="" SERVER_CPUS="" CLIENT_CPUS="" DRY_RUN=false
LABELS=self-hosted,linux,x64,hft-tuned
TUNING_BIN=/usr/local/sbin/hft-setup-system
TUNING_UNIT=/etc/systemd/system/hft-tuning.service
GRUB_CFG=/etc/default/grub.d/hft-bench.cfg

die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 2; }
step() { printf '%s: step: %s\n' "$PROG" "$*"; }
# run CMD...: print it; execute it unless --dry-run.
run() {
  printf '  + %s\n' "$*"
  [ "$DRY_RUN" = true ] || "$@"
}
# set_runner_env NAME VALUE: one NAME=VALUE line in the runner's .env (read when it starts;
# config.sh keeps other variables there, so only this name's line is replaced).
set_runner_env() {
  printf '  + set %s=%s in %s/.env\n' "$1" "$2" "$DIR"
  [ "$DRY_RUN" = true ] && return 0
  touch "$DIR/.env"
  sed -i "/^$1=/d" "$DIR/.env"
  printf '%s=%s\n' "$1" "$2" >>"$DIR/.env"
  chown "$RUNNER_USER:$RUNNER_USER" "$DIR/.env"
}
# write_file PATH MODE: content from stdin; printed under --dry-run.
write_file() {
  local content
  content=$(cat)
  printf '  + write %s (mode %s):\n      %s\n' "$1" "$2" "${content//$'\n'/$'\n'      }"
  [ "$DRY_RUN" = true ] && return 0
  install -d "$(dirname "$1")"
  printf '%s\n' "$content" >"$1.tmp" && chmod "$2" "$1.tmp" && mv "$1.tmp" "$1"
}

while [ $# -gt 0 ]; do
  case $1 in
    --url) URL=${2:?--url needs a value}; shift 2 ;;
    --name) NAME=${2:?--name needs a value}; shift 2 ;;
    --version) VERSION=${2:?--version needs a value}; shift 2 ;;
    --user) RUNNER_USER=${2:?--user needs a value}; shift 2 ;;
    --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
    --isolate) ISOLATE=${2:?--isolate needs a CPU list like 2-7}; shift 2 ;;
    --server-cpus) SERVER_CPUS=${2:?--server-cpus needs a CPU list like 2-7}; shift 2 ;;
    --client-cpus) CLIENT_CPUS=${2:?--client-cpus needs a CPU list like 8-27}; shift 2 ;;
    --dry-run) DRY_RUN=true; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done

[[ $URL =~ ^https://[^[:space:]]+/[^/[:space:]]+/[^/[:space:]]+$ ]] || die "--url must be the repository URL, e.g. https://github.com/OWNER/REPO (got '$URL')"
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--version must look like 2.329.0 (got '$VERSION')"
[[ $RUNNER_USER =~ ^[a-z_][a-z0-9_-]*$ ]] || die "--user must be a plain user name (got '$RUNNER_USER')"
CPU_LIST='^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$'
for pair in "--isolate=$ISOLATE" "--server-cpus=$SERVER_CPUS" "--client-cpus=$CLIENT_CPUS"; do
  list=${pair#*=}
  [ -z "$list" ] || [[ $list =~ $CPU_LIST ]] || die "${pair%%=*} must be a CPU list like 2-7 or 2,4-7 (got '$list')"
done
if [ "$DRY_RUN" = false ]; then
  [ "$(id -u)" -eq 0 ] || die "run as root (it creates a user, a systemd service, /usr/local/sbin/...), or pass --dry-run"
  [ -n "${RUNNER_TOKEN:-}" ] || die "set RUNNER_TOKEN to a registration token (repository Settings > Actions > Runners > New self-hosted runner)"
  [[ ${RUNNER_SHA256:-} =~ ^[0-9a-f]{64}$ ]] || die "set RUNNER_SHA256 to the tarball's sha256 shown on the runner release page"
fi
[ -x "$ROOT/hft/scripts/setup_hft_system.sh" ] || die "$ROOT/hft/scripts/setup_hft_system.sh not found: run from an hft-bench checkout"
TARBALL=actions-runner-linux-x64-$VERSION.tar.gz

step "1/5 runner user $RUNNER_USER (no sudo, no login shell)"
if id "$RUNNER_USER" >/dev/null 2>&1; then
  printf '  = user %s exists\n' "$RUNNER_USER"
else
  run useradd --system --create-home --shell /usr/sbin/nologin "$RUNNER_USER"
fi

step "2/5 GitHub Actions runner $VERSION in $DIR"
run install -d -o "$RUNNER_USER" -g "$RUNNER_USER" "$DIR"
run curl -fsSL -o "$DIR/$TARBALL" "https://github.com/actions/runner/releases/download/v$VERSION/$TARBALL"
# shellcheck disable=SC2016  # prints the command, the variable stays unexpanded on purpose
printf '  + echo "$RUNNER_SHA256  %s" | sha256sum -c -\n' "$DIR/$TARBALL"
[ "$DRY_RUN" = true ] || echo "$RUNNER_SHA256  $DIR/$TARBALL" | sha256sum -c - >/dev/null \
  || die "$DIR/$TARBALL does not match RUNNER_SHA256; not installing it"
run tar -xzf "$DIR/$TARBALL" -C "$DIR"
run chown -R "$RUNNER_USER:$RUNNER_USER" "$DIR"

step "3/5 register as '$NAME' with labels $LABELS; systemd service"
printf '  + runuser -u %s -- %s/config.sh --unattended --url %s --token *** --name %s --labels %s --work _work --replace\n' \
  "$RUNNER_USER" "$DIR" "$URL" "$NAME" "$LABELS"
[ "$DRY_RUN" = true ] || (cd "$DIR" && runuser -u "$RUNNER_USER" -- ./config.sh --unattended --url "$URL" \
  --token "$RUNNER_TOKEN" --name "$NAME" --labels "$LABELS" --work _work --replace)
run bash -c "cd '$DIR' && ./svc.sh install '$RUNNER_USER'"

step "4/5 run-time tunings at boot (hft-tuning.service, before the runner)"
run install -m 0755 "$ROOT/hft/scripts/setup_hft_system.sh" "$TUNING_BIN"
write_file "$TUNING_UNIT" 0644 <<UNIT
[Unit]
Description=hft-bench run-time tunings (setup_hft_system.sh --apply)
After=local-fs.target

[Service]
Type=oneshot
ExecStart=$TUNING_BIN --apply
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
UNIT
# The runner's unit (named by svc.sh, kept in $DIR/.service) starts only after the tunings.
if [ "$DRY_RUN" = true ] || [ ! -f "$DIR/.service" ]; then
  repo=${URL#https://*/}
  runner_unit="actions.runner.${repo//\//-}.$NAME.service"
else
  runner_unit=$(cat "$DIR/.service")
fi
write_file "/etc/systemd/system/$runner_unit.d/hft-tuning.conf" 0644 <<DROPIN
[Unit]
Requires=hft-tuning.service
After=hft-tuning.service
DROPIN
run systemctl daemon-reload
run systemctl enable --now hft-tuning.service

step "5/5 boot-time tunings (isolcpus, nohz_full, rcu_nocbs) and CPU placement"
if [ -n "$ISOLATE" ]; then
  write_file "$GRUB_CFG" 0644 <<GRUB
# hft-bench: keep the measured CPUs free of the scheduler, the tick and RCU callbacks.
GRUB_CMDLINE_LINUX_DEFAULT="\$GRUB_CMDLINE_LINUX_DEFAULT isolcpus=$ISOLATE nohz_full=$ISOLATE rcu_nocbs=$ISOLATE"
GRUB
  run update-grub
  printf '  ! reboot for isolcpus/nohz_full/rcu_nocbs to take effect; then: hftbench check-runner\n'
else
  printf '  = skipped (no --isolate); see hft/runner/README.md for the CPU list to isolate\n'
fi
[ -z "$SERVER_CPUS" ] || set_runner_env HFTBENCH_SERVER_CPUS "$SERVER_CPUS"
[ -z "$CLIENT_CPUS" ] || set_runner_env HFTBENCH_CLIENT_CPUS "$CLIENT_CPUS"
[ -n "$SERVER_CPUS$CLIENT_CPUS" ] || printf '  = server and clients not pinned (no --server-cpus / --client-cpus)\n'

run bash -c "cd '$DIR' && ./svc.sh start"
printf '%s: done%s\n' "$PROG" "$([ "$DRY_RUN" = true ] && echo ' (dry run: nothing changed)')"
