#!/usr/bin/env bash
# install-runner.sh: set up the tuned self-hosted runner of bench.yml on Debian 12, so that
# no job can leave anything behind for the next one (hft/runner/README.md).
#   1. a system user for the jobs (never root, no sudo, no login shell, no home of its own)
#   2. the GitHub Actions runner, its tarball checked against RUNNER_SHA256 before it is
#      unpacked into a root-owned pristine folder (/opt/hft-runner/pristine/<version>)
#   3. hft-runner.service, a root loop (runner-loop.sh) that for every job mints a GitHub App
#      installation token, asks for a just-in-time runner configuration (one job, then the
#      registration is gone), copies the pristine runner into a fresh folder owned by the
#      runner user, runs it in the sandboxed unit hft-runner-job@.service, deletes the folder
#      and clears the user's processes, crontab, at jobs, SysV IPC and temporary files.
#      The job-started hook (job-started-hook.sh, root-owned, named in every job's .env,
#      pinned to --repo and --protected) refuses every job that is not that repository's
#      bench.yml as a protected branch has it (a push or run by hand of another branch, a pull
#      request into another branch or changing bench.yml), every event bench.yml does not run
#      on, and any pull request of another repository (a fork); the loop leaves each job a read
#      token for it (contents: read), revoked when the job ends
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
#   RUNNER_SHA256=<sha256 of the tarball, from the release page> \
#   RUNNER_APP_KEY_FILE=<the GitHub App's private key .pem (README: The GitHub App)> \
#     hft/runner/install-runner.sh --repo OWNER/REPO --url https://github.com/ORG \
#       --runner-group N --app-id N --installation-id N
#       [--labels self-hosted,linux,x64,hft-tuned (this runner's; bench-config/pool.yaml)]
#       [--protected main (comma list: the branches whose bench.yml is reviewed)]
#       [--name NAME (default random)] [--version 2.x.y (default: runner-version/Dockerfile)]
#       [--user ghrunner] [--isolate 2-7 --server-cpus 2-7 --client-cpus 8-27] [--dry-run]
#       [--instance N (one of several runners on this host: its own user hft-runner-N)]
#   hft/runner/install-runner.sh --update VERSION SHA256    a newer runner for the next jobs
#   hft/runner/install-runner.sh --calibration FILE         hftbench calibrate's record, for jobs
# --repo is the one repository whose bench.yml this runner runs (the job-started hook is
# pinned to it). --url https://github.com/ORG registers organization runners, in the runner
# group --runner-group (required: the id of a group limited to --repo, docs/adopting.md,
# section 1; 1, the Default group, only when named); --url https://github.com/OWNER/REPO
# registers repository runners of --repo (no runner group). --protected names the branches
# whose bench.yml the hook runs (pushes and runs by hand of them; pull requests into them that
# leave bench.yml as the branch has it): branches that take no unreviewed commit.
# --calibration installs calibration.json root-owned and world-readable in /etc/hft-bench
# (the job user reads it; /etc/hft-runner is root's alone) and names it in the jobs' .env.
# --instance N (1-99): runner N of several on one host. Each has its own system user
# (hft-runner-N, unless --user names another), loop (hft-runner-N.service, loop-N.conf), job
# unit (hft-runner-N-job@.service), job and run folders, .env, hook line and calibration
# record, so that one loop's cleanup between jobs (every process of its user killed, its
# folders emptied, its job units stopped) never touches the other's job. A user another
# runner's loop.conf on this host already names is refused. Pass it to --calibration too.
# For tests: --root DIR puts every file under DIR and leaves the running system (systemctl,
# update-grub) alone; --api URL and --download-base URL stand in for GitHub; --job-runner
# direct runs jobs without systemd, and so without its sandbox.
# --dry-run prints every step and changes nothing (no root needed); no key is ever printed.
set -euo pipefail
PROG=install-runner.sh
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

# The runner version is pinned in runner-version/Dockerfile, where Dependabot watches it.
VERSION=$(sed -n 's|^FROM ghcr\.io/actions/actions-runner:\([0-9.]*\)$|\1|p' "$HERE/runner-version/Dockerfile" 2>/dev/null || true)
URL="" REPO="" NAME="" RUNNER_USER="" R="" API="" JOB_RUNNER=systemd CALIBRATION="" INSTANCE=""
ISOLATE="" SERVER_CPUS="" CLIENT_CPUS="" DRY_RUN=false GROUP_ID="" APP_ID="" INSTALLATION_ID=""
UPDATE="" UPDATE_SHA256="" DOWNLOAD_BASE=https://github.com/actions/runner/releases/download
LABELS=self-hosted,linux,x64,hft-tuned PROTECTED=main

die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 2; }
step() { printf '%s: step: %s\n' "$PROG" "$*"; }
# run CMD...: print it; execute it unless --dry-run.
run() {
  printf '  + %s\n' "$*"
  [ "$DRY_RUN" = true ] || "$@"
}
# system CMD...: a command on the running system: skipped under --root (a scratch tree).
system() {
  if [ -n "$R" ]; then printf '  = skipped under --root: %s\n' "$*"; else run "$@"; fi
}
# set_runner_env NAME VALUE: one NAME=VALUE line in the root-owned .env that the loop copies
# into every job's runner (read when it starts, passed to every job; only this name's line is
# replaced).
set_runner_env() {
  printf '  + set %s=%s in %s\n' "$1" "$2" "$RUNNER_ENV"
  [ "$DRY_RUN" = true ] && return 0
  touch "$RUNNER_ENV"
  sed -i "/^$1=/d" "$RUNNER_ENV"
  printf '%s=%s\n' "$1" "$2" >>"$RUNNER_ENV"
  chown root:root "$RUNNER_ENV" && chmod 0644 "$RUNNER_ENV"
}
# write_file PATH MODE: content from stdin; printed under --dry-run.
write_file() {
  local content
  content=$(cat)
  printf '  + write %s (mode %s):\n      %s\n' "$1" "$2" "${content//$'\n'/$'\n'      }"
  [ "$DRY_RUN" = true ] && return 0
  # Only a missing folder is made: `install -d` would reset an existing one's mode to 0755
  # (the root-only /etc/hft-runner, 0700, holds loop.conf).
  [ -d "$(dirname "$1")" ] || install -d "$(dirname "$1")"
  printf '%s\n' "$content" >"$1.tmp" && chmod "$2" "$1.tmp" && mv "$1.tmp" "$1"
}
# deny_user FILE: the runner user on its own line in cron.deny / at.deny.
deny_user() {
  printf '  + add %s to %s\n' "$RUNNER_USER" "$1"
  [ "$DRY_RUN" = true ] && return 0
  [ -d "$(dirname "$1")" ] || install -d "$(dirname "$1")"
  grep -qx "$RUNNER_USER" "$1" 2>/dev/null || printf '%s\n' "$RUNNER_USER" >>"$1"
}

while [ $# -gt 0 ]; do
  case $1 in
    --url) URL=${2:?--url needs a value}; shift 2 ;;
    --repo) REPO=${2:?--repo needs OWNER/REPO}; shift 2 ;;
    --name) NAME=${2:?--name needs a value}; shift 2 ;;
    --runner-group) GROUP_ID=${2:?--runner-group needs the runner group id}; shift 2 ;;
    --labels) LABELS=${2:?--labels needs a comma list}; shift 2 ;;
    --protected) PROTECTED=${2:?--protected needs a comma list of branches}; shift 2 ;;
    --calibration) CALIBRATION=${2:?--calibration needs the calibration.json of hftbench calibrate}; shift 2 ;;
    --app-id) APP_ID=${2:?--app-id needs the GitHub App id}; shift 2 ;;
    --installation-id) INSTALLATION_ID=${2:?--installation-id needs the App installation id}; shift 2 ;;
    --version) VERSION=${2:?--version needs a value}; shift 2 ;;
    --update) UPDATE=${2:?--update needs VERSION SHA256}; UPDATE_SHA256=${3:?--update needs VERSION SHA256}; shift 3 ;;
    --user) RUNNER_USER=${2:?--user needs a value}; shift 2 ;;
    --instance) INSTANCE=${2:?--instance needs a number 1-99}; shift 2 ;;
    --root) R=${2:?--root needs a folder}; shift 2 ;;
    --api) API=${2:?--api needs a URL}; shift 2 ;;
    --download-base) DOWNLOAD_BASE=${2:?--download-base needs a URL}; shift 2 ;;
    --job-runner) JOB_RUNNER=${2:?--job-runner needs systemd or direct}; shift 2 ;;
    --isolate) ISOLATE=${2:?--isolate needs a CPU list like 2-7}; shift 2 ;;
    --server-cpus) SERVER_CPUS=${2:?--server-cpus needs a CPU list like 2-7}; shift 2 ;;
    --client-cpus) CLIENT_CPUS=${2:?--client-cpus needs a CPU list like 8-27}; shift 2 ;;
    --dry-run) DRY_RUN=true; shift ;;
    -h|--help) sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done

[ -z "$R" ] || [[ $R == /* ]] || die "--root must be an absolute folder (got '$R')"
R=${R%/}
[ -z "$INSTANCE" ] || [[ $INSTANCE =~ ^[1-9][0-9]?$ ]] || die "--instance must be a number from 1 to 99, this runner's on the host (got '$INSTANCE')"
# One runner per host: the names below. Runner N of several (--instance N): its own of each
# name that one loop's cleanup acts on (user, units, job and run folders), and of its .env,
# hook line and calibration record (its CPUs and its calibration are its own).
sfx=${INSTANCE:+-$INSTANCE}
[ -n "$RUNNER_USER" ] || RUNNER_USER=${INSTANCE:+hft-runner-$INSTANCE}
[ -n "$RUNNER_USER" ] || RUNNER_USER=ghrunner
LOOP_UNIT=hft-runner$sfx
JOB_UNIT=hft-runner$sfx-job
RUNNER_HOME=$R/opt/hft-runner
PRISTINE=$RUNNER_HOME/pristine
JOBS_DIR=$R/var/lib/hft-runner${INSTANCE:+/runner-$INSTANCE}/jobs
RUN_DIR=$R/run/hft-runner${INSTANCE:+/runner-$INSTANCE}
SECRETS=$R/etc/hft-runner
# What jobs may read (root-owned, world-readable), apart from the root-only $SECRETS.
PUBLIC=$R/etc/hft-bench
CALIBRATION_FILE=$PUBLIC/calibration$sfx.json
APP_KEY=$SECRETS/app-key.pem
LOOP_CONF=$SECRETS/loop$sfx.conf
RUNNER_ENV=$SECRETS/runner$sfx.env
SKEL=$SECRETS/skel
TUNING_BIN=$R/usr/local/sbin/hft-setup-system
LOOP_BIN=$R/usr/local/sbin/hft-runner-loop
HOOK_BIN=$R/usr/local/sbin/hft-job-started-hook$sfx.sh  # .sh: the runner runs it as `bash -e PATH`
HOOK_LIB=$R/usr/local/lib/hft-runner/job-started-hook.sh
TOOLS_DIR=$R/opt/hft-bench/tools  # provision-host's act, actionlint, inferno (scripts/deps.sh)
UNITS=$R/etc/systemd/system
GRUB_CFG=$R/etc/default/grub.d/hft-bench.cfg
# shellcheck source=runner-pristine.sh
. "$HERE/runner-pristine.sh"

if [ -n "$UPDATE" ]; then
  [ "$DRY_RUN" = true ] || [ "$(id -u)" -eq 0 ] || die "run as root (the pristine runner is root's), or pass --dry-run"
  step "update: runner $UPDATE into $PRISTINE, checked before it is unpacked"
  install_pristine "$UPDATE" "$UPDATE_SHA256"
  printf '%s: done%s\n' "$PROG" "$([ "$DRY_RUN" = true ] && echo ' (dry run: nothing changed)')"
  exit 0
fi

if [ -n "$CALIBRATION" ]; then
  [ "$DRY_RUN" = true ] || [ "$(id -u)" -eq 0 ] || die "run as root (the record is root's, for the jobs to read), or pass --dry-run"
  [ -r "$CALIBRATION" ] || die "--calibration $CALIBRATION is not readable: the calibration.json that hftbench calibrate --out DIR wrote"
  [ "$DRY_RUN" = true ] || [ -f "$RUNNER_ENV" ] || die "$RUNNER_ENV not found: install the runner first (install-runner.sh --repo ...), then calibrate on it"
  command -v jq >/dev/null || die "jq not found: apt-get install jq"
  jq -e '(.guards | type == "array" and length > 0)' "$CALIBRATION" >/dev/null 2>&1 ||
    die "--calibration $CALIBRATION has no 'guards' list: not a calibration.json of hftbench calibrate"
  step "calibration: $CALIBRATION_FILE, root-owned and readable by the job user"
  run install -d -o root -g root -m 0755 "$PUBLIC"
  run install -o root -g root -m 0644 "$CALIBRATION" "$CALIBRATION_FILE.new"
  run mv -T "$CALIBRATION_FILE.new" "$CALIBRATION_FILE"
  set_runner_env HFTBENCH_CALIBRATION "$CALIBRATION_FILE"
  printf '  = jobs started from now on judge what it guards (hftbench reads HFTBENCH_CALIBRATION)\n'
  printf '%s: done%s\n' "$PROG" "$([ "$DRY_RUN" = true ] && echo ' (dry run: nothing changed)')"
  exit 0
fi

[[ $URL =~ ^https://[^/[:space:]]+/[^/[:space:]]+(/[^/[:space:]]+)?$ ]] || die "--url must be the repository or organization URL, e.g. https://github.com/OWNER/REPO (got '$URL')"
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--version must look like 2.329.0 (got '$VERSION'; the default is the tag of $HERE/runner-version/Dockerfile)"
[[ $RUNNER_USER =~ ^[a-z_][a-z0-9_-]*$ ]] || die "--user must be a plain user name (got '$RUNNER_USER')"
[ "$RUNNER_USER" != root ] || die "--user must not be root: the jobs run as it"
# The runner's name shows in every job log of a public repository: never the host name by
# default, a random one (each job's registration adds its own suffix).
[ -n "$NAME" ] || NAME=hft-bench-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
[[ $NAME =~ ^[A-Za-z0-9._-]+$ ]] || die "--name must be a plain name (got '$NAME')"
[[ $REPO =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "--repo must be OWNER/REPO, the one repository whose bench.yml this runner runs (got '$REPO')"
LABEL_LIST='^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$'
BRANCH_LIST='^[A-Za-z0-9_][A-Za-z0-9_./-]*(,[A-Za-z0-9_][A-Za-z0-9_./-]*)*$'
[[ $PROTECTED =~ $BRANCH_LIST && $PROTECTED != *..* ]] || die "--protected must be a comma list of branch names like main,release: the branches whose bench.yml is reviewed (got '$PROTECTED')"
[[ $LABELS =~ $LABEL_LIST ]] || die "--labels must be a comma list of labels like self-hosted,linux,x64,hft-tuned,pool-desktop: this runner's labels in bench-config/pool.yaml (got '$LABELS')"
[[ $APP_ID =~ ^[0-9]+$ ]] || die "--app-id must be the GitHub App's numeric id, from its settings page (got '$APP_ID'; hft/runner/README.md, The GitHub App)"
[[ $INSTALLATION_ID =~ ^[0-9]+$ ]] || die "--installation-id must be the App installation's number, the last part of its settings URL (got '$INSTALLATION_ID')"
case $JOB_RUNNER in systemd | direct) ;; *) die "--job-runner must be systemd or direct (got '$JOB_RUNNER')" ;; esac
CPU_LIST='^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$'
for pair in "--isolate=$ISOLATE" "--server-cpus=$SERVER_CPUS" "--client-cpus=$CLIENT_CPUS"; do
  list=${pair#*=}
  [ -z "$list" ] || [[ $list =~ $CPU_LIST ]] || die "${pair%%=*} must be a CPU list like 2-7 or 2,4-7 (got '$list')"
done
if [ "$DRY_RUN" = false ]; then
  [ "$(id -u)" -eq 0 ] || die "run as root (it creates a user, systemd services, /usr/local/sbin/...), or pass --dry-run"
  [[ ${RUNNER_SHA256:-} =~ ^[0-9a-f]{64}$ ]] || die "set RUNNER_SHA256 to the tarball's sha256 shown on the runner release page"
  if [ ! -s "$APP_KEY" ]; then
    [ -r "${RUNNER_APP_KEY_FILE:-}" ] || die "set RUNNER_APP_KEY_FILE to the GitHub App's private key (.pem, downloaded from the App's settings; README: The GitHub App)"
    openssl pkey -in "$RUNNER_APP_KEY_FILE" -noout 2>/dev/null || die "RUNNER_APP_KEY_FILE=$RUNNER_APP_KEY_FILE is not a private key: download a new one from the App's settings page"
  fi
  for tool in jq openssl curl setpriv; do
    command -v "$tool" >/dev/null || die "$tool not found: apt-get install jq openssl curl util-linux (the loop and the job-started hook need them)"
  done
fi
for f in job-started-hook.sh runner-loop.sh; do
  [ -f "$HERE/$f" ] || die "$HERE/$f not found: run from an hft-bench checkout"
done
[ -x "$ROOT/hft/scripts/setup_hft_system.sh" ] || die "$ROOT/hft/scripts/setup_hft_system.sh not found: run from an hft-bench checkout"
host=${URL#https://}; host=${host%%/*}
path=${URL#https://"$host"/}
if [ -z "$API" ]; then
  if [ "$host" = github.com ]; then API=https://api.github.com; else API=https://$host/api/v3; fi
fi
GROUPS_URL="GET /orgs/${path%%/*}/actions/runner-groups"
if [[ $path == */* ]]; then
  SCOPE=repos/$path
  [ "$path" = "$REPO" ] || die "--url $URL registers runners of $path, but --repo is $REPO: a repository runner serves only its own repository"
  # A repository's runners have no runner group of their own choosing: the API's Default (1).
  [ -z "$GROUP_ID" ] || die "--runner-group needs an organization --url (runner groups are the organization's); a repository runner has none"
  GROUP_ID=1
else
  SCOPE=orgs/$path
  [ "$path" = "${REPO%%/*}" ] || die "--url $URL registers runners of the organization $path, but --repo $REPO belongs to ${REPO%%/*}"
  [ -n "$GROUP_ID" ] || die "--runner-group is required with an organization --url: the id of a runner group limited to $REPO ($GROUPS_URL; docs/adopting.md, section 1). Without it the runner would join the Default group, which every repository of $path may use"
  [[ $GROUP_ID =~ ^[0-9]+$ ]] || die "--runner-group must be a number, the id of a runner group ($GROUPS_URL) (got '$GROUP_ID')"
fi

[ "$SCOPE" = "repos/$REPO" ] || [ "$GROUP_ID" != 1 ] ||
  printf '  ! --runner-group 1 is the Default group: limit it to %s (docs/adopting.md, section 1); the job-started hook refuses every other repository anyway\n' "$REPO"

# One user per runner: a loop clears every process of its user between jobs (runner-loop.sh,
# scrub), so a user two runners share would have each kill the other's job.
for conf in "$SECRETS"/loop.conf "$SECRETS"/loop-*.conf; do
  if [ "$conf" = "$LOOP_CONF" ] || [ ! -r "$conf" ]; then continue; fi
  if grep -qx "user=$RUNNER_USER" "$conf"; then
    die "user $RUNNER_USER already runs the runner of $conf: two runners sharing a user kill each other's jobs when either clears its user's processes between jobs. Give this one its own: --instance N (user hft-runner-N), or --user NAME"
  fi
done

step "1/6 runner user $RUNNER_USER (no sudo, no login shell, no home: each job gets a fresh one)"
if id "$RUNNER_USER" >/dev/null 2>&1; then
  printf '  = user %s exists\n' "$RUNNER_USER"
else
  run useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$RUNNER_USER"
fi
# crontab and at are setgid/setuid: the job unit's NoNewPrivileges already stops them; the
# deny files say so to cron and atd too, and the loop clears both between jobs anyway.
deny_user "$R/etc/cron.deny"
deny_user "$R/etc/at.deny"

step "2/6 GitHub Actions runner $VERSION, checked, root-owned in $PRISTINE; jobs run from copies"
install_pristine "$VERSION" "${RUNNER_SHA256:-0000000000000000000000000000000000000000000000000000000000000000}"
run install -d -o root -g root -m 0755 "$R/var/lib/hft-runner"
[ -z "$INSTANCE" ] || run install -d -o root -g root -m 0711 "${JOBS_DIR%/jobs}"
run install -d -o root -g root -m 0711 "$JOBS_DIR"
run install -d -o root -g root -m 0700 "$SECRETS"
# The calibration record lives here, not in the root-only $SECRETS: every job reads it.
run install -d -o root -g root -m 0755 "$PUBLIC"
run install -d -o root -g root -m 0755 "$SKEL"
printf '  = %s: the home every job starts from (root-owned; add dotfiles there)\n' "$SKEL"
# The jobs' toolchains: root-owned, on PATH before anything in the home (fresh every job).
set_runner_env PATH "/opt/rust/cargo/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
set_runner_env RUSTUP_HOME /opt/rust/rustup
set_runner_env HFT_CI true
# scripts/deps.sh links act, actionlint and inferno from here (provision-host builds them)
# instead of building them from the network in every job.
set_runner_env HFT_TOOLS_DIR "$TOOLS_DIR"
printf '  ! rustup must live in /opt/rust (RUSTUP_HOME=/opt/rust/rustup CARGO_HOME=/opt/rust/cargo), root-owned; Go in /usr/local/go\n'

step "3/6 $LOOP_UNIT.service: one JIT registration and a fresh runner folder per job, a sandboxed job unit, a job-started hook"
# shellcheck disable=SC2016  # prints the command, the variable stays unexpanded on purpose
printf '  + install -o root -g root -m 0600 "$RUNNER_APP_KEY_FILE" %s (the App key: root only)\n' "$APP_KEY"
if [ "$DRY_RUN" = false ] && [ -n "${RUNNER_APP_KEY_FILE:-}" ]; then
  install -o root -g root -m 0600 "$RUNNER_APP_KEY_FILE" "$APP_KEY"
fi
# An install from before the App: its admin token and its shared runner folder go.
if [ -e "$SECRETS/admin-token" ]; then
  run rm -f "$SECRETS/admin-token"
  printf '  ! revoke the old RUNNER_ADMIN_TOKEN on GitHub: the loop registers with the App now\n'
fi
[ ! -d "$R/opt/actions-runner" ] || printf '  ! %s, the old shared runner folder, is unused now: rm -rf it\n' "$R/opt/actions-runner"
run install -D -o root -g root -m 0755 "$HERE/runner-loop.sh" "$LOOP_BIN"
write_file "$LOOP_CONF" 0600 <<CONF
# hft-runner-loop's settings, written by install-runner.sh (re-run it to change them)
user=$RUNNER_USER
repo=$REPO
api=$API
scope=$SCOPE
app_id=$APP_ID
installation_id=$INSTALLATION_ID
app_key=$APP_KEY
runner_group_id=$GROUP_ID
labels=$LABELS
name=$NAME
jobs_dir=$JOBS_DIR
pristine_dir=$PRISTINE
skel=$SKEL
runner_env=$RUNNER_ENV
job_runner=$JOB_RUNNER
unit=$JOB_UNIT
run_dir=$RUN_DIR
retry_s=30
retry_max_s=900
CONF
[ "$JOB_RUNNER" = systemd ] || printf '  ! --job-runner direct: jobs run WITHOUT the unit'"'"'s sandbox (a machine without systemd, the tests)\n'
# shellcheck source=runner-units.sh
. "$HERE/runner-units.sh"

# The runner runs it before every job's first step and fails the job when it exits non-zero.
# It is pinned to --repo and --protected here, on the machine: the line the runner runs names
# them. Its read token is the one the loop leaves in the job's fresh home (runner-loop.sh,
# HOOK_TOKEN): HOME comes from the job's unit, not from the workflow.
run install -D -o root -g root -m 0755 "$HERE/job-started-hook.sh" "$HOOK_LIB"
write_file "$HOOK_BIN" 0755 <<HOOK
#!/usr/bin/env bash
# hft-bench's job-started hook, pinned to $REPO and its protected branches $PROTECTED by
# install-runner.sh --repo --protected (re-run it to change).
exec bash -e $HOOK_LIB --repo $REPO --protected $PROTECTED --api $API --token-file "\$HOME/.hft-bench-hook-token"
HOOK
set_runner_env ACTIONS_RUNNER_HOOK_JOB_STARTED "$HOOK_BIN"

step "4/6 run-time tunings at boot (hft-tuning.service, before the runner)"
run install -D -m 0755 "$ROOT/hft/scripts/setup_hft_system.sh" "$TUNING_BIN"
write_file "$UNITS/hft-tuning.service" 0644 <<UNIT
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
system systemctl daemon-reload
system systemctl enable --now hft-tuning.service

step "5/6 boot-time tunings (isolcpus, nohz_full, rcu_nocbs) and CPU placement"
if [ -n "$ISOLATE" ]; then
  write_file "$GRUB_CFG" 0644 <<GRUB
# hft-bench: keep the measured CPUs free of the scheduler, the tick and RCU callbacks.
GRUB_CMDLINE_LINUX_DEFAULT="\$GRUB_CMDLINE_LINUX_DEFAULT isolcpus=$ISOLATE nohz_full=$ISOLATE rcu_nocbs=$ISOLATE"
GRUB
  system update-grub
  printf '  ! reboot for isolcpus/nohz_full/rcu_nocbs to take effect; then: hftbench check-runner\n'
else
  printf '  = skipped (no --isolate); see hft/runner/README.md for the CPU list to isolate\n'
fi
[ -z "$SERVER_CPUS" ] || set_runner_env HFTBENCH_SERVER_CPUS "$SERVER_CPUS"
[ -z "$CLIENT_CPUS" ] || set_runner_env HFTBENCH_CLIENT_CPUS "$CLIENT_CPUS"
[ -n "$SERVER_CPUS$CLIENT_CPUS" ] || printf '  = server and clients not pinned (no --server-cpus / --client-cpus)\n'

step "6/6 start (a loop already running is restarted onto the new one; a job it runs is ended)"
system systemctl enable "$LOOP_UNIT.service"
system systemctl restart "$LOOP_UNIT.service"
printf '%s: done%s\n' "$PROG" "$([ "$DRY_RUN" = true ] && echo ' (dry run: nothing changed)')"
