/* hft-seccomp: the seccomp filter of the sandbox that builds and serves a pull request's code
 * (scripts/hftbench/measure/sandbox.py), written as classic BPF for `bwrap --seccomp FD`.
 *
 *   hft-seccomp          the filter, BPF, on stdout (make build keeps it in build/sandbox/)
 *   hft-seccomp --pfc    the same filter as libseccomp's readable pseudo-code
 *
 * A deny-list over the native architecture: every call runs but those below, which a cargo
 * build (cargo, rustc, cc, ld, build scripts) or an order server has no use for and which are
 * a kernel surface or a way out: keys, tracing another process, eBPF and perf, userfaultfd,
 * loading kernels and modules, mounts and new namespaces (bwrap has set the sandbox up before
 * it loads the filter), a personality that turns off address randomization, io_uring, and
 * faking terminal input. Why a deny-list and not an allow-list: SECURITY.md ("The sandbox").
 * Another architecture's calls (i386's int 0x80, x32) kill the process: libseccomp's default.
 *
 * The list is libseccomp's to resolve (syscall names, numbers and argument checks), so a
 * kernel or architecture with other numbers gets the right ones. */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Refused with EPERM, whatever their arguments. */
static const char *const REFUSED[] = {
    /* the kernel's key store: another process's keys, a large attack surface */
    "keyctl", "add_key", "request_key",
    /* another process's memory and registers */
    "ptrace", "process_vm_readv", "process_vm_writev",
    /* eBPF programs, perf events, page faults handled in user space (exploit helpers) */
    "bpf", "perf_event_open", "userfaultfd",
    /* kernels and modules */
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    /* mounts, once bwrap has made the sandbox's */
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* new namespaces, or joining another (clone's flags: below) */
    "unshare", "setns",
    /* the host itself */
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "sethostname",
    "setdomainname", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl",
    "ioperm", "uselib", "vhangup", "lookup_dcookie", "nfsservctl",
    /* a file by its handle, past the mount it should be reached through */
    "open_by_handle_at", "name_to_handle_at",
    "fanotify_init",
};

/* Refused with ENOSYS, "not implemented": callers fall back to what the filter can judge.
 * clone3 passes its flags in memory, out of a filter's reach: glibc then uses clone, whose
 * flags are checked below. io_uring submits calls the filter never sees. */
static const char *const ABSENT[] = {
    "clone3", "io_uring_setup", "io_uring_enter", "io_uring_register",
};

/* clone with any of these: a new namespace. */
static const unsigned long NAMESPACE_FLAGS[] = {
    CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
    CLONE_NEWNET,
};

static int fail(const char *what, int rc) {
    fprintf(stderr, "hft-seccomp: %s: %s\n", what, strerror(-rc));
    return 1;
}

static int add(scmp_filter_ctx ctx, int errno_value, const char *name, unsigned count,
               const struct scmp_arg_cmp *cmp) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) {
        fprintf(stderr, "hft-seccomp: libseccomp knows no system call %s\n", name);
        return 1;
    }
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errno_value), nr, count, cmp);
    return rc < 0 ? fail(name, rc) : 0;
}

int main(int argc, char **argv) {
    int pfc = argc == 2 && strcmp(argv[1], "--pfc") == 0;
    if (argc > 1 && !pfc) {
        fprintf(stderr, "usage: hft-seccomp [--pfc]  (the sandbox's filter on stdout: BPF, or readable)\n");
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL) {
        fprintf(stderr, "hft-seccomp: seccomp_init failed\n");
        return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < sizeof REFUSED / sizeof *REFUSED; i++) bad |= add(ctx, EPERM, REFUSED[i], 0, NULL);
    for (size_t i = 0; i < sizeof ABSENT / sizeof *ABSENT; i++) bad |= add(ctx, ENOSYS, ABSENT[i], 0, NULL);
    for (size_t i = 0; i < sizeof NAMESPACE_FLAGS / sizeof *NAMESPACE_FLAGS; i++) {
        struct scmp_arg_cmp flag = SCMP_A0(SCMP_CMP_MASKED_EQ, NAMESPACE_FLAGS[i], NAMESPACE_FLAGS[i]);
        bad |= add(ctx, EPERM, "clone", 1, &flag);
    }
    /* personality: only Linux's own (PER_LINUX, 0), as Flatpak's filter: never
     * ADDR_NO_RANDOMIZE and the like (the query, 0xffffffff, is refused with them). */
    struct scmp_arg_cmp persona = SCMP_A0(SCMP_CMP_NE, 0);
    bad |= add(ctx, EPERM, "personality", 1, &persona);
    /* typing into the terminal of whoever started the harness */
    struct scmp_arg_cmp tiocsti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI);
    bad |= add(ctx, EPERM, "ioctl", 1, &tiocsti);
    int rc = bad ? 0 : pfc ? seccomp_export_pfc(ctx, STDOUT_FILENO) : seccomp_export_bpf(ctx, STDOUT_FILENO);
    seccomp_release(ctx);
    if (bad) return 1;
    return rc < 0 ? fail("export", rc) : 0;
}
