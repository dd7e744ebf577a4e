"""Confining one process with Landlock and a seccomp filter (Linux), stdlib only.

The supervisor (``agent.supervisor``) loads this file by path, without the ``agent`` package, so
it imports nothing but ``ctypes``, ``os`` and ``struct``. ``build_ruleset`` runs in the
supervisor before it forks (paths are opened there, errors are reported before anything
starts); ``restrict`` runs in the forked child right before ``exec``: it sets
``PR_SET_NO_NEW_PRIVS``, installs the seccomp filter and calls ``landlock_restrict_self``.
A command started with privileges (root) also loses every capability but the file-permission
ones (``drop_capabilities``, called by the supervisor on itself before it forks). Everything the command starts inherits all this and cannot lift it.

What the ruleset allows: reading and executing everywhere (``/``); every write right except
making device nodes beneath each writable folder; writing (and device ioctls) on ``/dev/null``,
``/dev/zero``, ``/dev/full`` and ``/dev/tty``. Where the ABI has them: TCP bind and connect
are denied when the network is (ABI 4), and signals and abstract Unix sockets may not reach
processes outside the sandbox (ABI 6 scopes). The seccomp filter refuses ``socket()`` (EACCES)
for every address family but ``AF_NETLINK`` and, when allowed, ``AF_UNIX`` (so UDP, raw and
packet sockets too when the network is denied; only ``AF_UNIX`` when it is not), refuses
``io_uring_setup`` (io_uring could open sockets behind the filter's back), the x32 ABI and
foreign architectures (i386 ``socketcall``). The filter is built for x86_64 and aarch64;
elsewhere only Landlock applies (``seccomp_supported``).
"""

from __future__ import annotations

import ctypes
import os
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

# Filesystem rights (bit, first ABI that has it).
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
FS_MAKE_SYM, FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_FS_V1 = (1 << 13) - 1
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
#: Files a confined command may still write (and ioctl): the usual sinks and the terminal.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")

#: Capabilities a command started with privileges (root) keeps: the file-permission ones a root
#: user works with in its workspace, and the harmless rest of container runtimes' default set;
#: loading modules, raw devices, mounts, the clock, the host name, network administration,
#: ptrace of others, BPF, device nodes and the like are dropped (bounding set included).
KEPT_CAPABILITIES = sum(1 << cap for cap in (0, 1, 2, 3, 4, 5, 6, 7, 10, 18, 29))
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAP_VERSION_3 = 0x20080522

AF_UNIX, AF_NETLINK = 1, 16
EACCES, EPERM = 13, 1
# seccomp BPF
_LD_ABS_W, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
#: machine -> (AUDIT_ARCH, socket nr, io_uring_setup nr, x32 bit or 0)
_ARCHES = {"x86_64": (0xC000003E, 41, 425, 0x40000000), "aarch64": (0xC00000B7, 198, 425, 0)}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled (``-errno`` is
    not returned: ``landlock_status`` says why)."""
    result = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(result), 0)


def landlock_status() -> tuple[int, str]:
    """``(abi, reason)``: the ABI version (0 = unusable) and, when 0, why in a few words."""
    result = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    if result > 0:
        return int(result), ""
    err = ctypes.get_errno()
    if err == 38:  # ENOSYS
        return 0, f"the kernel ({os.uname().release}) has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)"
    if err == 95:  # EOPNOTSUPP
        return 0, "Landlock is disabled (add landlock to the lsm= boot parameter)"
    return 0, f"Landlock refused: {os.strerror(err)}"


def seccomp_supported() -> bool:
    """Whether the seccomp filter is built for this machine's architecture."""
    return os.uname().machine in _ARCHES


def fs_rights(abi: int) -> int:
    """Every filesystem right the ABI version ``abi`` knows (a bit mask)."""
    rights = _FS_V1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def build_ruleset(writable: list[str], network: bool, abi: int | None = None) -> int:
    """Create the Landlock ruleset (see the module docstring) and return its descriptor.

    ``writable``: absolute folders (or files) writable beneath; missing ones are skipped.
    ``network``: False denies TCP bind/connect where the ABI has network rules (>= 4).
    Raises ``OSError`` when Landlock is unavailable or refuses a rule."""
    abi = abi or abi_version()
    if abi < 1:
        raise OSError(EPERM, landlock_status()[1] or "Landlock is unavailable")
    handled = fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if (abi >= 4 and not network) else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled, net, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    fd = _check(_libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0)),
                "landlock_create_ruleset")
    try:
        _add_path(fd, "/", READ_RIGHTS, handled)
        write = handled & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK)
        for path in [*writable, *WRITABLE_DEVICES]:
            _add_path(fd, path, write, handled)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _add_path(ruleset: int, path: str, rights: int, handled: int) -> None:
    """Allow ``rights`` beneath ``path`` (file rights only for a non-folder); skip a missing path."""
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights & handled, target), 12)
        _check(_libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), rule,
                             ctypes.c_uint32(0)), f"landlock_add_rule {path}")
    finally:
        os.close(target)


def seccomp_program(network: bool, unix_sockets: bool, machine: str | None = None) -> bytes:
    """The seccomp BPF program (``struct sock_filter`` array) for ``network`` / ``unix_sockets``
    on ``machine`` (default: this one). Raises ``KeyError`` for an architecture without one."""
    arch, nr_socket, nr_uring, x32 = _ARCHES[machine or os.uname().machine]
    allowed = [AF_NETLINK] + ([AF_UNIX] if unix_sockets else [])
    deny_socket = _RET_ERRNO | EACCES
    # Instructions as (code, jt, jf, k); jumps are relative to the next instruction.
    prog: list[tuple[int, int, int, int]] = [(_LD_ABS_W, 0, 0, 4), (_JEQ_K, 1, 0, arch),
                                             (_RET_K, 0, 0, _RET_ERRNO | EPERM), (_LD_ABS_W, 0, 0, 0)]
    if x32:
        prog += [(_JGE_K, 0, 1, x32), (_RET_K, 0, 0, _RET_ERRNO | EPERM)]
    prog += [(_JEQ_K, 0, 1, nr_uring), (_RET_K, 0, 0, _RET_ERRNO | EPERM),
             (_JEQ_K, 1, 0, nr_socket), (_RET_K, 0, 0, _RET_ALLOW),
             (_LD_ABS_W, 0, 0, 16)]  # args[0], low 32 bits (little-endian): the address family
    if network:
        allowed += [2, 10]  # AF_INET, AF_INET6; denied network: not even UDP
    for position, family in enumerate(allowed):
        remaining = len(allowed) - position - 1
        prog.append((_JEQ_K, remaining + 1, 0, family))  # match: jump over the rest and the deny
    prog += [(_RET_K, 0, 0, deny_socket), (_RET_K, 0, 0, _RET_ALLOW)]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


def drop_capabilities(extra: int = 0) -> bool:
    """Drop every capability outside ``KEPT_CAPABILITIES`` (and the ``extra`` mask: the supervisor
    keeps ``CAP_SETFCAP`` for ``protect``, whose uid map of root needs it; the child drops it
    again after) from the bounding, ambient, effective, permitted and inheritable sets of the
    calling process, when it has any (root); returns whether it had some. Raises ``OSError``
    when the sets cannot be changed."""
    kept_mask = KEPT_CAPABILITIES | extra
    header = ctypes.create_string_buffer(struct.pack("=Ii", _CAP_VERSION_3, 0), 8)
    data = ctypes.create_string_buffer(24)
    _check(_libc.capget(header, data), "capget")
    sets = struct.unpack("=6I", data.raw)  # (effective, permitted, inheritable) x (caps 0-31, 32-63)
    if not (sets[1] or sets[4]):
        return False
    zero = ctypes.c_ulong(0)
    for cap in range(64):
        if not (kept_mask >> cap) & 1:
            _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), zero, zero, zero)  # EINVAL past the last one
    _libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), zero, zero, zero)
    low, high = kept_mask & 0xFFFFFFFF, kept_mask >> 32
    kept = struct.pack("=6I", *(value & (low if i < 3 else high) for i, value in enumerate(sets)))
    _check(_libc.capset(ctypes.create_string_buffer(struct.pack("=Ii", _CAP_VERSION_3, 0), 8),
                        ctypes.create_string_buffer(kept, 24)), "capset")
    return True


CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
#: The capability ``protect`` needs from a root supervisor (mapping uid 0 into the namespace).
CAP_SETFCAP_MASK = 1 << 31
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def protect(pinned: list[str], readonly: list[str]) -> None:
    """Make ``readonly`` paths (files or folders: a repository's ``config``, ``hooks``...) read-only
    and ``pinned`` folders (its ``.git``) impossible to rename or remove, for the calling process
    and what it starts: a user and mount namespace of its own (the same uid and gid mapped),
    each pinned path bind-mounted on itself, each read-only one bind-mounted on itself and
    remounted read-only. Landlock cannot deny a subpath of a writable folder; this can, and
    ``restrict`` (Landlock) then forbids unmounting them. Missing paths are skipped; nothing to
    do does nothing. Raises ``OSError`` (``unshare``/``mount``: ``ns``/``bind`` in the message)."""
    pinned = [p for p in pinned if os.path.lexists(p)]
    readonly = [p for p in readonly if os.path.lexists(p)]
    if not (pinned or readonly):
        return
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS)), "ns unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(_libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "ns mount-private")
    for path in pinned:
        raw = os.fsencode(path)
        _check(_libc.mount(raw, raw, None, ctypes.c_ulong(MS_BIND), None), f"bind {path}")
    for path in readonly:
        raw = os.fsencode(path)
        _check(_libc.mount(raw, raw, None, ctypes.c_ulong(MS_BIND | MS_REC), None), f"bind {path}")
        _check(_libc.mount(None, raw, None, ctypes.c_ulong(MS_BIND | MS_REMOUNT | MS_RDONLY), None),
               f"bind read-only {path}")
    # The new namespace gave this process every capability inside it: drop them again (none of
    # them reaches outside the namespace, but CAP_SETFCAP could mark files for the host).
    drop_capabilities()


def restrict(ruleset: int, program: bytes | None) -> None:
    """Confine the calling process (single-threaded, right before ``exec``): no new privileges,
    the seccomp ``program`` (None: none), then the Landlock ``ruleset``. Raises ``OSError``.
    (``drop_capabilities`` runs before the fork, in the supervisor: in the child its calls
    would cost a millisecond of copy-on-write faults.)"""
    zero = ctypes.c_ulong(0)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero), "prctl(NO_NEW_PRIVS)")
    if program:
        filt = ctypes.create_string_buffer(program, len(program))
        raw = struct.pack("@HP", len(program) // 8, ctypes.addressof(filt))
        fprog = ctypes.create_string_buffer(raw, len(raw))
        _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), fprog, ctypes.c_ulong(0),
                           ctypes.c_ulong(0)), "seccomp")
    _check(_libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
