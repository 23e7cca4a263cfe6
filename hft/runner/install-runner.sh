#!/usr/bin/env bash
# install-runner.sh: set up the tuned self-hosted runner of bench.yml on Debian 12, so that
# no job can leave anything behind for the next one.
#   1. a system user for the jobs (never root, no sudo, no login shell)
#   2. the GitHub Actions runner, its tarball checked against RUNNER_SHA256, unpacked into a
#      root-owned folder: only _work/, _diag/ and the registration files are the user's
#   3. hft-runner.service: a root-owned loop that, for every job, registers the runner as
#      ephemeral (one job, then it unregisters) with --disableupdate, the registration token
#      minted from the admin token in a root-only file and handed over in the environment
#      (never a process argument); runs it as the runner user in its own cgroup; then ends
#      every process of that user and wipes its home, _work, _diag and its files in the
#      temporary folders, re-seeding the home from the read-only root skeleton
#      A job-started hook (job-started-hook.sh, root-owned, named in the runner's .env) refuses
#      every job that is not this repository's bench.yml, and any fork's pull request
#   4. hft-tuning.service: setup_hft_system.sh --apply at every boot, before the loop; root
#      runs a copy in /usr/local/sbin, not the runner's checkout (which PR code can edit)
#   5. with --isolate CPUS: the boot-time tunings isolcpus / nohz_full / rcu_nocbs in
#      /etc/default/grub.d/hft-bench.cfg and update-grub (takes effect after a reboot);
#      with --server-cpus / --client-cpus: HFTBENCH_SERVER_CPUS / HFTBENCH_CLIENT_CPUS in
#      the runner's .env, where every hftbench run, ab and calibrate of a job reads them
# Toolchains (rustup's cargo in /opt/rust, Go in /usr/local/go) are root-owned and read-only
# to the jobs; the job's PATH (the runner's .env) names them, never ~/.cargo/bin.
#
# Usage (as root):
#   RUNNER_ADMIN_TOKEN=<token allowed to create registration tokens: a fine-grained PAT with
#   "Administration: write" on the repository, or "Self-hosted runners: write" on the org>
#   RUNNER_SHA256=<sha256 of the tarball> \
#     hft/runner/install-runner.sh --url https://github.com/OWNER/REPO [--name NAME (default random)]
#       [--runner-group GROUP] [--version 2.x.y] [--user ghrunner] [--dir /opt/actions-runner]
#       [--isolate 2-7 --server-cpus 2-7 --client-cpus 8-27] [--dry-run]
# --url https://github.com/ORG registers an organization runner; --runner-group puts it in a
# runner group limited to this repository (docs/adopting.md, section 1).
# --dry-run prints every step and changes nothing (no root needed). The tokens are read from
# the environment, so they never show in `ps` or in the printed steps.
set -euo pipefail
PROG=install-runner.sh
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

URL="" NAME="" VERSION=2.329.0 RUNNER_USER=ghrunner DIR=/opt/actions-runner
ISOLATE="" SERVER_CPUS="" CLIENT_CPUS="" DRY_RUN=false GROUP=""
LABELS=self-hosted,linux,x64,hft-tuned
TUNING_BIN=/usr/local/sbin/hft-setup-system
TUNING_UNIT=/etc/systemd/system/hft-tuning.service
LOOP_BIN=/usr/local/sbin/hft-runner-loop
HOOK_BIN=/usr/local/sbin/hft-job-started-hook.sh  # .sh: the runner runs it as `bash -e PATH`
LOOP_UNIT=/etc/systemd/system/hft-runner.service
SECRETS=/etc/hft-runner
SKEL=/etc/hft-runner/skel
GRUB_CFG=/etc/default/grub.d/hft-bench.cfg
RUNNER_FILES=".runner .credentials .credentials_rsaparams"  # written by config.sh at each registration

die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 2; }
step() { printf '%s: step: %s\n' "$PROG" "$*"; }
# run CMD...: print it; execute it unless --dry-run.
run() {
  printf '  + %s\n' "$*"
  [ "$DRY_RUN" = true ] || "$@"
}
# set_runner_env NAME VALUE: one NAME=VALUE line in the runner's root-owned .env (read when
# it starts, passed to every job; only this name's line is replaced).
set_runner_env() {
  printf '  + set %s=%s in %s/.env\n' "$1" "$2" "$DIR"
  [ "$DRY_RUN" = true ] && return 0
  touch "$DIR/.env"
  sed -i "/^$1=/d" "$DIR/.env"
  printf '%s=%s\n' "$1" "$2" >>"$DIR/.env"
  chown root:root "$DIR/.env" && chmod 0644 "$DIR/.env"
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
    --runner-group) GROUP=${2:?--runner-group needs a group name}; shift 2 ;;
    --version) VERSION=${2:?--version needs a value}; shift 2 ;;
    --user) RUNNER_USER=${2:?--user needs a value}; shift 2 ;;
    --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
    --isolate) ISOLATE=${2:?--isolate needs a CPU list like 2-7}; shift 2 ;;
    --server-cpus) SERVER_CPUS=${2:?--server-cpus needs a CPU list like 2-7}; shift 2 ;;
    --client-cpus) CLIENT_CPUS=${2:?--client-cpus needs a CPU list like 8-27}; shift 2 ;;
    --dry-run) DRY_RUN=true; shift ;;
    -h|--help) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done

[[ $URL =~ ^https://[^/[:space:]]+/[^/[:space:]]+(/[^/[:space:]]+)?$ ]] || die "--url must be the repository or organization URL, e.g. https://github.com/OWNER/REPO (got '$URL')"
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--version must look like 2.329.0 (got '$VERSION')"
[[ $RUNNER_USER =~ ^[a-z_][a-z0-9_-]*$ ]] || die "--user must be a plain user name (got '$RUNNER_USER')"
# The runner's name shows in every job log of a public repository: never the host name by
# default, a random one (one registration per job; --replace keeps one name per install).
[ -n "$NAME" ] || NAME=hft-bench-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
[[ $NAME =~ ^[A-Za-z0-9._-]+$ ]] || die "--name must be a plain name (got '$NAME')"
[ -z "$GROUP" ] || [[ $GROUP =~ ^[A-Za-z0-9._\ -]+$ ]] || die "--runner-group must be a group name (got '$GROUP')"
CPU_LIST='^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$'
for pair in "--isolate=$ISOLATE" "--server-cpus=$SERVER_CPUS" "--client-cpus=$CLIENT_CPUS"; do
  list=${pair#*=}
  [ -z "$list" ] || [[ $list =~ $CPU_LIST ]] || die "${pair%%=*} must be a CPU list like 2-7 or 2,4-7 (got '$list')"
done
if [ "$DRY_RUN" = false ]; then
  [ "$(id -u)" -eq 0 ] || die "run as root (it creates a user, systemd services, /usr/local/sbin/...), or pass --dry-run"
  [ -n "${RUNNER_ADMIN_TOKEN:-}" ] || die "set RUNNER_ADMIN_TOKEN to a token that may create registration tokens (see --help)"
  [[ ${RUNNER_SHA256:-} =~ ^[0-9a-f]{64}$ ]] || die "set RUNNER_SHA256 to the tarball's sha256 shown on the runner release page"
fi
[ -f "$HERE/job-started-hook.sh" ] || die "$HERE/job-started-hook.sh not found: run from an hft-bench checkout"
[ "$DRY_RUN" = true ] || command -v jq >/dev/null || die "jq not found: apt-get install jq (the loop and the job-started hook read JSON with it)"
[ -x "$ROOT/hft/scripts/setup_hft_system.sh" ] || die "$ROOT/hft/scripts/setup_hft_system.sh not found: run from an hft-bench checkout"
TARBALL=actions-runner-linux-x64-$VERSION.tar.gz
host=${URL#https://}; host=${host%%/*}
path=${URL#https://"$host"/}
if [ "$host" = github.com ]; then API=https://api.github.com; else API=https://$host/api/v3; fi
if [[ $path == */* ]]; then TOKEN_API="$API/repos/$path/actions/runners/registration-token"
else TOKEN_API="$API/orgs/$path/actions/runners/registration-token"; fi
[ -z "$GROUP" ] || [[ $path != */* ]] || die "--runner-group needs an organization --url (runner groups are the organization's)"

step "1/6 runner user $RUNNER_USER (no sudo, no login shell)"
if id "$RUNNER_USER" >/dev/null 2>&1; then
  printf '  = user %s exists\n' "$RUNNER_USER"
else
  run useradd --system --create-home --shell /usr/sbin/nologin "$RUNNER_USER"
fi

step "2/6 GitHub Actions runner $VERSION in $DIR, root-owned except _work, _diag and its registration files"
run install -d -o root -g root -m 0755 "$DIR"
run curl -fsSL -o "$DIR/$TARBALL" "https://github.com/actions/runner/releases/download/v$VERSION/$TARBALL"
# shellcheck disable=SC2016  # prints the command, the variable stays unexpanded on purpose
printf '  + echo "$RUNNER_SHA256  %s" | sha256sum -c -\n' "$DIR/$TARBALL"
[ "$DRY_RUN" = true ] || echo "$RUNNER_SHA256  $DIR/$TARBALL" | sha256sum -c - >/dev/null \
  || die "$DIR/$TARBALL does not match RUNNER_SHA256; not installing it"
run tar -xzf "$DIR/$TARBALL" -C "$DIR"
run rm -f "$DIR/$TARBALL"
run chown -R root:root "$DIR"
run chmod -R go-w "$DIR"
run install -d -o "$RUNNER_USER" -g "$RUNNER_USER" -m 0700 "$DIR/_work" "$DIR/_diag"
# config.sh rewrites these at every registration; the folder itself stays root's.
for f in $RUNNER_FILES; do run install -o "$RUNNER_USER" -g "$RUNNER_USER" -m 0600 /dev/null "$DIR/$f"; done
run install -o root -g root -m 0644 /dev/null "$DIR/.path"  # env.sh's; the PATH is .env's
# The jobs' toolchains: root-owned, on PATH before anything in the home (which is wiped anyway).
set_runner_env PATH "/opt/rust/cargo/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
set_runner_env RUSTUP_HOME /opt/rust/rustup
set_runner_env HFT_CI true
printf '  ! rustup must live in /opt/rust (RUSTUP_HOME=/opt/rust/rustup CARGO_HOME=/opt/rust/cargo), root-owned; Go in /usr/local/go\n'

step "3/6 hft-runner.service: one ephemeral registration per job, a clean user between jobs, a job-started hook"
run install -d -o root -g root -m 0700 "$SECRETS"
printf '  + write %s/admin-token (mode 0600, root): RUNNER_ADMIN_TOKEN from the environment, as an HTTP header\n' "$SECRETS"
if [ "$DRY_RUN" = false ]; then
  umask 077
  printf 'Authorization: Bearer %s\n' "$RUNNER_ADMIN_TOKEN" >"$SECRETS/admin-token"
  umask 022
fi
run install -d -o root -g root -m 0755 "$SKEL"
printf '  = %s: the home every job starts from (root-owned, read-only; add dotfiles there)\n' "$SKEL"
write_file "$LOOP_BIN" 0755 <<LOOP
#!/usr/bin/env bash
# hft-runner-loop (root): register, run one job as $RUNNER_USER, then leave nothing behind.
set -uo pipefail
user=$RUNNER_USER dir=$DIR home=\$(getent passwd $RUNNER_USER | cut -d: -f6)
clean() {
  pkill -KILL -u "\$user" 2>/dev/null; sleep 1; pkill -KILL -u "\$user" 2>/dev/null
  find "\$home" "\$dir/_work" "\$dir/_diag" -mindepth 1 -delete 2>/dev/null
  find /tmp /var/tmp /dev/shm -xdev -user "\$user" -delete 2>/dev/null
  cp -a $SKEL/. "\$home/" && chown -R "\$user:\$user" "\$home"
  for f in $RUNNER_FILES; do : >"\$dir/\$f"; done
}
while true; do
  clean
  # The runner starts even when the tunings failed (a runner that stays offline says nothing):
  # say it here, in this unit's journal, at every job; check-runner then fails the job with it.
  if systemctl is-failed --quiet hft-tuning.service; then
    echo "hft-runner-loop: ERROR: hft-tuning.service failed; jobs run untuned and fail check-runner (journalctl -u hft-tuning.service)" >&2
  fi
  # A registration token lives an hour: mint one per job. The admin token stays in a header file.
  reg=\$(curl -fsS -X POST -H @$SECRETS/admin-token -H 'Accept: application/vnd.github+json' \\
    $TOKEN_API | jq -r .token) || { sleep 30; continue; }
  # config.sh and run.sh read ACTIONS_RUNNER_INPUT_<FLAG> from the environment: the token is
  # never an argument. --ephemeral: one job, then GitHub removes the registration.
  (cd "\$dir" && ACTIONS_RUNNER_INPUT_TOKEN=\$reg runuser -u "\$user" -- ./config.sh --unattended --ephemeral --disableupdate --replace --url $URL --name $NAME \\
    --labels $LABELS --work _work${GROUP:+ --runnergroup "$GROUP"}) || { sleep 30; continue; }
  unset reg
  # The job runs in its own cgroup: when run.sh exits, every process it started is ended.
  systemd-run --quiet --wait --collect --uid="\$user" --gid="\$user" -p WorkingDirectory="\$dir" \\
    -p KillMode=control-group "\$dir/run.sh"
done
LOOP
write_file "$LOOP_UNIT" 0644 <<UNIT
[Unit]
Description=hft-bench self-hosted runner (ephemeral, one job per registration)
After=network-online.target hft-tuning.service
Wants=network-online.target hft-tuning.service

[Service]
ExecStart=$LOOP_BIN
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
UNIT

# The runner runs it before every job's first step and fails the job when it exits non-zero.
run install -o root -g root -m 0755 "$HERE/job-started-hook.sh" "$HOOK_BIN"
set_runner_env ACTIONS_RUNNER_HOOK_JOB_STARTED "$HOOK_BIN"

step "4/6 run-time tunings at boot (hft-tuning.service, before the runner)"
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
run systemctl daemon-reload
run systemctl enable --now hft-tuning.service

step "5/6 boot-time tunings (isolcpus, nohz_full, rcu_nocbs) and CPU placement"
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

step "6/6 start"
run systemctl enable --now hft-runner.service
printf '%s: done%s\n' "$PROG" "$([ "$DRY_RUN" = true ] && echo ' (dry run: nothing changed)')"
