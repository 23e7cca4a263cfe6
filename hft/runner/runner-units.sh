# shellcheck shell=bash
# runner-units.sh, sourced by install-runner.sh: the two systemd units of the runner.
#   hft-runner.service        the root loop (runner-loop.sh), always on
#   hft-runner-job@.service   one job: run.sh of the job's runner copy, as the runner user,
#                             sandboxed; the loop starts hft-runner-job@<job>.service
# Runner N of several on one host (--instance N): hft-runner-N.service and
# hft-runner-N-job@.service, its own user, job and run folders.
# Needs from install-runner.sh: UNITS, LOOP_UNIT, JOB_UNIT, LOOP_BIN, LOOP_CONF, JOBS_DIR,
# RUN_DIR, RUNNER_USER, write_file.

write_file "$UNITS/$LOOP_UNIT.service" 0644 <<UNIT
[Unit]
Description=hft-bench self-hosted runner loop (one just-in-time registration per job)
After=network-online.target hft-tuning.service
Wants=network-online.target hft-tuning.service

[Service]
ExecStart=$LOOP_BIN --config $LOOP_CONF
Restart=always
RestartSec=10

[Install]
WantedBy=multi-user.target
UNIT

# Writable: only the job's own folder (its runner copy, which the runner writes into, and its
# home: cargo, go, pip and npm caches), a private /tmp and /var/tmp, and /dev/shm (Python's
# multiprocessing; cleared by the loop). Everything else is read-only or hidden.
# No ProtectProc=invisible: check-runner (setup_hft_system.sh) looks for root's irqbalance
# with pgrep, and would report it stopped when it runs.
write_file "$UNITS/$JOB_UNIT@.service" 0644 <<UNIT
[Unit]
Description=hft-bench runner job %i (one job of one just-in-time registration, sandboxed)

[Service]
Type=simple
User=$RUNNER_USER
Group=$RUNNER_USER
WorkingDirectory=$JOBS_DIR/%i/runner
Environment=HOME=$JOBS_DIR/%i/home
# ACTIONS_RUNNER_INPUT_JITCONFIG: written root-only by the loop, read by systemd as root.
EnvironmentFile=$RUN_DIR/%i.env
ExecStart=$JOBS_DIR/%i/runner/run.sh
# When run.sh exits, every process the job started goes with it.
KillMode=control-group
TimeoutStopSec=30
# bench.yml's longest job is 240 minutes.
RuntimeMaxSec=5h
NoNewPrivileges=yes
RestrictSUIDSGID=yes
CapabilityBoundingSet=
ProtectSystem=strict
ReadWritePaths=$JOBS_DIR/%i
ProtectHome=tmpfs
PrivateTmp=yes
PrivateIPC=yes
RemoveIPC=yes
# No ProtectKernelTunables / ProtectKernelLogs: their mounts over /proc/sys and /proc/kmsg
# forbid a fresh /proc in a user namespace, which bwrap (the sandbox of a pull request's
# build and server, scripts/hftbench/measure/sandbox.py) needs; the job's user, without
# capabilities, can change no tunable and read no kernel log anyway.
ProtectKernelModules=yes
# The job's own cgroup, delegated: systemd enables cpuset, memory and pids for it and hands
# the runner user the group's directory, cgroup.procs and cgroup.subtree_control, so hftbench
# (measure/cgroup_leaf.py) moves the job's processes into a leaf, hft-bench-job, and makes each
# side's server a group beside it: its CPUs, a memory and a pids limit, and its CPU per order
# from cpu.stat, exited children included. Only the job's group and below: every group above
# it stays root's, and the job's user, without capabilities, can write none of them.
# No ProtectControlGroups=yes: in systemd 252 (Debian 12) it mounts all of /sys/fs/cgroup
# read-only, the delegated group included (ProtectControlGroups=private, a writable cgroup
# namespace of the unit's own group, is systemd 257's). No DelegateSubgroup= either (systemd
# 254; 252 ignores it as unknown): hftbench makes the leaf itself.
# The PR's code cannot leave its group: bwrap mounts /sys read-only and drops capabilities.
Delegate=cpuset memory pids
ProtectClock=yes
ProtectHostname=yes
LockPersonality=yes
UMask=0077
# Namespaces: only the ones bwrap makes for the sandbox of a pull request's build and server
# (measure/sandbox.py: an unprivileged bwrap's user and mount namespaces, --unshare-pid,
# --unshare-ipc, and --unshare-net for a server handed its socket by the harness). No uts,
# cgroup.
RestrictNamespaces=user mnt pid ipc net
# System calls: what a service needs (@system-service), the mounts bwrap makes inside its own
# namespaces (@mount; in the host's, without a capability, they fail anyway) and ab's
# perf record (perf_event_open); not the kernel keyrings (@keyring: the user's keyring would
# outlive the job, state for the next one) nor userfaultfd (an exploit's tool, no benchmark's).
# So no ptrace, bpf, kexec, module, swap, reboot, clock or raw I/O call. Refused with EPERM, not
# killed: a program that probes for what is left out (V8's memory protection keys, a landlock
# or seccomp call) falls back instead of dying.
SystemCallFilter=@system-service @mount perf_event_open
SystemCallFilter=~@keyring userfaultfd
SystemCallErrorNumber=EPERM
SystemCallArchitectures=native
UNIT
