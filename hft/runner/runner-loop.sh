#!/usr/bin/env bash
# runner-loop.sh, installed root-owned as hft-runner-loop by install-runner.sh: the root loop
# of hft-runner.service. For every job:
#   1. clears everything the runner user can leave behind (scrub, below);
#   2. mints a GitHub App installation token (a JWT signed RS256 with the App's key, which
#      only root can read) and asks the REST API for a just-in-time runner configuration
#      (generate-jitconfig: one job, then GitHub removes the registration);
#   3. copies the checked, root-owned pristine runner (pristine/current, switched atomically
#      by `install-runner.sh --update`) into a fresh per-job folder owned by the runner user,
#      with the root-owned .env that names the job-started hook, and leaves the hook a read
#      token in the job's fresh home (contents: read on the one repository, nothing else): the
#      hook compares a pull request's bench.yml with its base branch's, deletes the token's
#      file before the job's first step, and the loop revokes the token when the job ends;
#   4. runs `run.sh` there as the runner user, the JIT configuration handed over in the
#      environment (ACTIONS_RUNNER_INPUT_JITCONFIG, never an argument that ps shows), in the
#      sandboxed unit hft-runner-job@<job>.service (job_runner=systemd), or directly
#      (job_runner=direct: no sandbox, for a machine or VM without systemd; the tests);
#   5. deletes the per-job folder and scrubs again.
# A try that ran no job, or whose runner is too old, is a failure: its registration is
# removed, and the next try registers anew after a back-off that doubles with each failure in
# a row (retry_s, 2 retry_s, ... up to retry_max_s). run.sh cannot say so by itself: it exits
# 0 for a finished job, a terminated runner, a session conflict, a registration GitHub
# removed and any unknown error alike (actions/runner src/Misc/layoutroot/run.sh:20-28,
# run-helper.sh.template:38-81); only a deprecated version keeps its code, 7, and only when
# ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE=1 is in run.sh's own environment (the
# runner's .env reaches only the listener, Runner.Listener/Program.cs:172-196). So the loop
# sets that variable where it starts run.sh, and asks the runner's folder whether a job ran:
# the listener starts Runner.Worker for a job, whose trace is _diag/Worker_<utc>-utc.log
# (Runner.Common/HostContext.cs:140, HostTraceListener.cs:12).
# hft/runner/README.md lists every path the runner writes and every process it starts.
#   hft-runner-loop [--config /etc/hft-runner/loop.conf] [--jobs N (stop after N tries; 0: never)]
set -uo pipefail
PROG=hft-runner-loop
CONF=/etc/hft-runner/loop.conf
MAX_JOBS=0

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { log "error: $*"; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --config) CONF=${2:?--config needs a file}; shift 2 ;;
    --jobs) MAX_JOBS=${2:?--jobs needs a count}; shift 2 ;;
    *) die "unknown argument '$1' (hft-runner-loop [--config FILE] [--jobs N])" ;;
  esac
done
[[ $MAX_JOBS =~ ^[0-9]+$ ]] || die "--jobs must be a whole number (got '$MAX_JOBS')"
[ "$(id -u)" -eq 0 ] || die "run as root (it switches to the runner user and clears what it left)"
[ -r "$CONF" ] || die "$CONF not readable: run hft/runner/install-runner.sh first"

# loop.conf: KEY=VALUE lines written by install-runner.sh; read, never sourced.
KEYS="user repo api scope app_id installation_id app_key runner_group_id labels name jobs_dir pristine_dir skel runner_env job_runner unit run_dir retry_s retry_max_s"
cfg_user="" cfg_repo="" cfg_api="" cfg_scope="" cfg_app_id="" cfg_installation_id="" cfg_app_key="" cfg_runner_group_id=""
cfg_labels="" cfg_name="" cfg_jobs_dir="" cfg_pristine_dir="" cfg_skel="" cfg_runner_env="" cfg_job_runner=""
cfg_unit="" cfg_run_dir="" cfg_retry_s="" cfg_retry_max_s=""
while IFS= read -r line; do
  case $line in '' | '#'*) continue ;; esac
  key=${line%%=*}
  [[ " $KEYS " == *" $key "* ]] || die "$CONF: unknown key '$key' (known: $KEYS)"
  printf -v "cfg_$key" '%s' "${line#*=}"
done <"$CONF"
for key in $KEYS; do
  v=cfg_$key
  [ -n "${!v:-}" ] || die "$CONF: $key is missing or empty: re-run hft/runner/install-runner.sh"
done
case $cfg_job_runner in systemd | direct) ;; *) die "$CONF: job_runner must be systemd or direct (got '$cfg_job_runner')" ;; esac
[[ $cfg_repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "$CONF: repo must be OWNER/REPO (got '$cfg_repo')"
[[ $cfg_runner_group_id =~ ^[0-9]+$ ]] || die "$CONF: runner_group_id must be a number (got '$cfg_runner_group_id')"
for key in retry_s retry_max_s; do
  v=cfg_$key
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$CONF: $key must be a number of seconds > 0 (got '${!v}')"
done
# One loop per user, job unit and job folder. Between jobs a loop kills every process of its
# user (scrub); when it starts it stops its job units and empties its job and run folders. A
# second runner on this host (install-runner.sh --instance N: loop-N.conf beside this one)
# naming the same of any would have each loop kill, stop or delete the other's job.
for other in "${CONF%/*}"/loop.conf "${CONF%/*}"/loop-*.conf; do
  if [ ! -f "$other" ] || [ "$other" -ef "$CONF" ]; then continue; fi
  for key in user unit jobs_dir run_dir; do
    v=cfg_$key
    if grep -qxF "$key=${!v}" "$other"; then
      die "$CONF and $other both name $key=${!v}: two runners of one host sharing it would kill, stop or delete each other's jobs between jobs. Give each its own: install-runner.sh --instance N (user hft-runner-N, its own units and folders)"
    fi
  done
done
if ! uid=$(id -u "$cfg_user") || ! gid=$(id -g "$cfg_user"); then
  die "user $cfg_user does not exist: re-run install-runner.sh"
fi
[ "$uid" -ne 0 ] || die "$CONF: user must not be root"
for tool in curl jq openssl setpriv pkill pgrep ipcs ipcrm; do
  command -v "$tool" >/dev/null || die "$tool not found: apt-get install curl jq openssl util-linux procps"
done

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# api METHOD BEARER PATH [BODY]: the response on stdout. The bearer token goes to curl in a
# config read from stdin, so it never shows in ps.
api() {
  printf 'header = "Authorization: Bearer %s"\n' "$2" |
    curl -fsS -K - -X "$1" -H 'Accept: application/vnd.github+json' \
      -H 'X-GitHub-Api-Version: 2022-11-28' ${4+--data-binary "$4"} "$cfg_api/$3"
}

# installation_token [BODY]: an hour-long token of the App's installation. The App holds the
# self-hosted runners permission and Contents: Read-only, so this token can do nothing else;
# BODY narrows it further (repositories, permissions: read_token below).
installation_token() {
  local now head body unsigned sig
  now=$(date +%s)
  head=$(printf '{"alg":"RS256","typ":"JWT"}' | b64url)
  # iat 60 s back for clock skew; GitHub refuses an exp more than 10 minutes ahead.
  body=$(printf '{"iat":%d,"exp":%d,"iss":"%s"}' $((now - 60)) $((now + 540)) "$cfg_app_id" | b64url)
  unsigned=$head.$body
  sig=$(printf '%s' "$unsigned" | openssl dgst -sha256 -sign "$cfg_app_key" -binary | b64url) || return 1
  [ -n "$sig" ] || return 1
  api POST "$unsigned.$sig" "app/installations/$cfg_installation_id/access_tokens" "${1:-}" | jq -er .token
}

# The read token's file in the job's home, where the hook's root-owned line looks for it
# ("$HOME/.hft-bench-hook-token", install-runner.sh).
HOOK_TOKEN=.hft-bench-hook-token

# read_token: the job-started hook's token for one job: contents: read on the one repository,
# nothing else (not the runners permission). A job's own GITHUB_TOKEN reads as much; this one
# never reaches a step (the hook deletes its file first), and it is revoked when the job ends.
read_token() {
  local body
  body=$(jq -nc --arg r "${cfg_repo#*/}" '{repositories: [$r], permissions: {contents: "read"}}')
  installation_token "$body"
}

# jit_config TOKEN NAME: "<runner id> <base64 JIT configuration>" of one runner for one job,
# its .runner with disableUpdate set: the runner then asks GitHub for no self-update
# (MessageListener.cs sends it with every poll), which would run the job from a tarball we
# did not check; the runner is updated here instead (install-runner.sh --update).
jit_config() {
  local req resp id
  req=$(jq -nc --arg name "$2" --argjson group "$cfg_runner_group_id" --arg labels "$cfg_labels" \
    '{name: $name, runner_group_id: $group, labels: ($labels | split(",")), work_folder: "_work"}')
  resp=$(api POST "$1" "$cfg_scope/actions/runners/generate-jitconfig" "$req") || return 1
  id=$(jq -er .runner.id <<<"$resp") || return 1
  printf '%s ' "$id"
  jq -er .encoded_jit_config <<<"$resp" | base64 -d |
    jq -ce '.[".runner"] |= (@base64d | fromjson | .disableUpdate = true | tojson | @base64)' | base64 -w0
}

# remove_runner ID: a registration whose runner failed is removed at once, not left offline
# in the runner list (after a job, GitHub has removed it already).
remove_runner() {
  local token
  if token=$(installation_token) && api DELETE "$token" "$cfg_scope/actions/runners/$1" >/dev/null 2>&1; then
    log "removed the registration of runner $1"
  else
    log "could not remove runner $1 (already gone, or see the error above); GitHub lists it as offline until then"
  fi
}

# scrub: everything of the runner user outside the per-job folder, as root. The unit's
# sandbox keeps most of it from being made (hft/runner/README.md); this clears it anyway,
# and is all there is under job_runner=direct. It selects by this runner's user alone (uid,
# owner): never by a name or pattern, and the user is this runner's only (checked above).
scrub() {
  local kind id left
  # Every process of the dedicated uid, whatever session or cgroup it escaped to.
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    pkill -KILL -U "$uid" 2>/dev/null
    pkill -KILL -u "$uid" 2>/dev/null
    pgrep -U "$uid" >/dev/null || pgrep -u "$uid" >/dev/null || break
    sleep 0.2
  done
  left=$(pgrep -U "$uid") && log "ERROR: processes of $cfg_user still alive after SIGKILL: $left"
  if command -v crontab >/dev/null; then crontab -r -u "$cfg_user" 2>/dev/null; fi
  if command -v atq >/dev/null; then
    # atq as root lists every user's jobs; the owner is the last column.
    atq | awk -v u="$cfg_user" '$NF == u { print $1 }' | while read -r id; do atrm "$id"; done
  fi
  # SysV IPC owned by the user: ipcs names the owner (or its uid) in column 3, the id in 2.
  for kind in -m -s -q; do
    ipcs "$kind" | awk -v u="$cfg_user" -v n="$uid" '($3 == u || $3 == n) && $2 ~ /^[0-9]+$/ { print $2 }' |
      while read -r id; do ipcrm "$kind" "$id"; done
  done
  for dir in /dev/shm /dev/mqueue /run/lock /tmp /var/tmp; do
    [ -d "$dir" ] && find "$dir" -xdev -mindepth 1 -user "$uid" -delete 2>/dev/null
  done
  return 0
}

# The exit code of a runner too old for GitHub (Runner.Common/Constants.cs:162,
# RunnerVersionDeprecated): run.sh passes it on only with the variable below set.
DEPRECATED=7

# run_job ID DIR JIT: run.sh of DIR/runner as the user; its exit status.
run_job() {
  local id=$1 dir=$2 jit=$3 rc
  if [ "$cfg_job_runner" = systemd ]; then
    local unit=$cfg_unit@$id.service envfile=$cfg_run_dir/$id.env
    install -d -o root -g root -m 0700 "$cfg_run_dir"
    (umask 077 && printf 'ACTIONS_RUNNER_INPUT_JITCONFIG=%s\nACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE=1\n' \
      "$jit" >"$envfile")
    systemctl start --wait "$unit"
    rc=$?
    # `systemctl start --wait` says only that the unit failed; run.sh's own code is ExecMainStatus.
    if [ "$rc" -ne 0 ]; then
      local status
      status=$(systemctl show -p ExecMainStatus --value "$unit" 2>/dev/null)
      [[ $status =~ ^[0-9]+$ ]] && [ "$status" -ne 0 ] && rc=$status
    fi
    rm -f "$envfile"
    systemctl stop "$unit" 2>/dev/null
    systemctl reset-failed "$unit" 2>/dev/null
    return "$rc"
  fi
  # direct: the same command as the unit's ExecStart, without its sandbox.
  (
    for v in $(compgen -e); do unset "$v" 2>/dev/null; done
    export HOME=$dir/home USER=$cfg_user LOGNAME=$cfg_user PATH=/usr/local/bin:/usr/bin:/bin
    export ACTIONS_RUNNER_INPUT_JITCONFIG=$jit ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE=1
    cd "$dir/runner" && exec setpriv --reuid="$uid" --regid="$gid" --init-groups -- ./run.sh
  ) </dev/null
}

# What a loop that was stopped mid-job left: its job unit, its job folder, its env file.
if [ "$cfg_job_runner" = systemd ]; then systemctl stop "$cfg_unit@*.service" 2>/dev/null; fi
[ ! -d "$cfg_jobs_dir" ] || find "$cfg_jobs_dir" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
[ ! -d "$cfg_run_dir" ] || find "$cfg_run_dir" -mindepth 1 -maxdepth 1 -name '*.env' -delete

# job_ran DIR: whether the runner in DIR started Runner.Worker, i.e. took a job (above). The
# job could delete the log (the folder is its user's): then the loop only backs off once.
job_ran() {
  compgen -G "$1/runner/_diag/Worker_*.log" >/dev/null
}

n=0 failed=0 in_a_row=0
while true; do
  scrub
  # The runner starts even when the tunings failed (a runner that stays offline says nothing):
  # say it here, in this unit's journal, at every job; check-runner then fails the job with it.
  if [ "$cfg_job_runner" = systemd ] && systemctl is-failed --quiet hft-tuning.service; then
    log "ERROR: hft-tuning.service failed; jobs run untuned and fail check-runner (journalctl -u hft-tuning.service)"
  fi
  n=$((n + 1)) ok=false
  id=$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  pristine=$(readlink -f "$cfg_pristine_dir/current")
  if [ ! -x "$pristine/run.sh" ]; then
    log "ERROR: $cfg_pristine_dir/current has no run.sh: install a runner with install-runner.sh --update VERSION SHA256"
    failed=$((failed + 1))
  elif ! token=$(installation_token); then
    log "ERROR: no installation token from $cfg_api for App $cfg_app_id, installation $cfg_installation_id (key $cfg_app_key; hft/runner/README.md, 'The GitHub App')"
    failed=$((failed + 1))
  elif ! jit=$(jit_config "$token" "$cfg_name-${id##*-}"); then
    log "ERROR: generate-jitconfig refused for $cfg_scope (runner group $cfg_runner_group_id; the App needs the self-hosted runners permission)"
    failed=$((failed + 1))
  else
    unset token
    runner_id=${jit%% *} jit=${jit#* }
    dir=$cfg_jobs_dir/$id
    install -d -o root -g root -m 0711 "$dir"
    # The copy is the user's: the runner writes into its own root (hft/runner/README.md);
    # the pristine it came from stays root's and unchanged.
    if ! { cp -a "$pristine" "$dir/runner" && cp -a "$cfg_skel" "$dir/home" &&
      chown -R "$uid:$gid" "$dir/runner" "$dir/home" &&
      install -o root -g root -m 0644 "$cfg_runner_env" "$dir/runner/.env"; }; then
      log "ERROR: could not prepare $dir from $pristine and $cfg_skel (disk full? df $cfg_jobs_dir)"
      rc=1
    else
      log "job $id: runner ${pristine##*/} in $dir"
      # Without it the hook refuses pull requests (it cannot compare their bench.yml) and says
      # so in the job; pushes and runs by hand of a protected branch need none.
      if ! read_tok=$(read_token); then
        read_tok=""
        log "WARNING: job $id: no read token for the job-started hook: it refuses pull requests until the App has Contents: Read-only on $cfg_repo (hft/runner/README.md, 'The GitHub App')"
      elif ! { (umask 077 && printf '%s\n' "$read_tok" >"$dir/home/$HOOK_TOKEN") &&
        chown "$uid:$gid" "$dir/home/$HOOK_TOKEN"; }; then
        log "WARNING: job $id: could not leave the hook its read token in $dir/home: it refuses pull requests"
      fi
      run_job "$id" "$dir" "$jit"
      rc=$?
      if [ -n "$read_tok" ] && ! api DELETE "$read_tok" installation/token >/dev/null 2>&1; then
        log "job $id: could not revoke the hook's read token (it lapses within the hour)"
      fi
      unset read_tok
      log "job $id: run.sh exited $rc"
      if [ "$rc" -eq "$DEPRECATED" ]; then
        log "ERROR: job $id: runner ${pristine##*/} is deprecated: GitHub sends it no job. Install a newer one: install-runner.sh --update VERSION SHA256 (hft/runner/README.md, 'Updating the runner')"
      elif [ "$rc" -eq 0 ] && ! job_ran "$dir"; then
        log "ERROR: job $id: the runner exited without running a job (terminated, a session conflict, its registration gone, or an unknown error: run.sh says 0 for all of them; its output above says which)"
        rc=1
      fi
    fi
    unset jit
    if [ "$rc" -eq 0 ]; then ok=true; else failed=$((failed + 1)) && remove_runner "$runner_id"; fi
    rm -rf "$dir"
  fi
  if $ok; then in_a_row=0; else in_a_row=$((in_a_row + 1)); fi
  if [ "$MAX_JOBS" -gt 0 ] && [ "$n" -ge "$MAX_JOBS" ]; then
    scrub
    [ "$failed" -eq 0 ]
    exit
  fi
  # A refused registration or a failed runner is retried with a new registration, not
  # hammered: the wait doubles with each failure in a row, up to retry_max_s.
  if ! $ok; then
    wait_s=$cfg_retry_s
    for ((k = 1; k < in_a_row && wait_s < cfg_retry_max_s; k++)); do wait_s=$((wait_s * 2)); done
    [ "$wait_s" -le "$cfg_retry_max_s" ] || wait_s=$cfg_retry_max_s
    log "backing off ${wait_s} s after $in_a_row failed tries in a row; then a new registration"
    sleep "$wait_s"
  fi
done
