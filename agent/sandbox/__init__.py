"""The OS sandbox of the commands the bash tool runs (Linux Landlock plus a seccomp filter).

Modes (``SandboxMode``): ``read-only`` (Plan mode, and the ``read-only`` permission mode): the
whole filesystem readable, nothing writable but a private temp folder per session (``TMPDIR``;
never the journal's folder), network denied unless configured; ``workspace-write`` (Act mode's
default where the sandbox is available): also the workspace, its git folder when that lies
outside it (a worktree, a subfolder of a repository) and the folders listed in
``sandbox.writable``, network allowed unless denied; ``off``: unconfined.

Parts: ``policy`` (what one command may do, and the supervisor options carrying it), ``probe``
(whether this machine can do it, and why not), ``setup`` (the policy a session's settings ask
for), ``refusal`` (the line a refused command's result gains), ``confine`` (the stdlib-only
Landlock and seccomp calls, applied by ``agent.supervisor`` in the child right before ``exec``).

Closed: writes outside the writable folders (every file, folder, link, rename, truncate and
device-node right Landlock knows, ABI 1-5), whatever the user's file permissions (root too);
TCP bind/connect (ABI 4) and every other ``socket()`` but netlink when the network is denied
(seccomp: UDP, raw, packet); ``socket(AF_UNIX)`` unless ``sandbox.unix_sockets`` (a daemon such
as docker or an ssh-agent acts outside the sandbox); abstract Unix sockets and signals to
processes outside the sandbox (ABI 6 scopes); io_uring (it could open sockets past seccomp);
32-bit and x32 system calls; setuid programs gaining privileges (``no_new_privs``); mounts
(Landlock forbids them); for a privileged (root) agent, every capability but the file-permission
ones (modules, raw devices, the clock, the host name, network administration, BPF...).
In workspace-write mode the repository's program-naming git files (``config``, ``hooks/``,
``info/``, a worktree's pointers; ``setup.git_protected``) are read-only and ``.git`` is pinned
(``confine.protect``: a user + mount namespace with read-only bind mounts, before Landlock), so
a command cannot plant code for later git calls outside the sandbox (the app's own git calls
are neutralised besides: ``agent.git_safety``).
Everything a command starts inherits the sandbox.

Remaining: a new ``.git/commondir`` or a nested repository (``sub/.git``) the user's own git may
read later; reading is not restricted (secrets in ``~`` can be read and, with network allowed,
sent); Unix sockets inherited already open, and ``socketpair``; writes through an already open
descriptor passed in (the agent passes none but the output pipe); a root command keeps the
file-permission capabilities (it reads every file; ``chown`` inside the writable folders) and
kernel keyrings;
``/dev/shm`` is not writable (programs using POSIX semaphores fail) unless listed; on kernels
before Landlock ABI 4, TCP is not confined by Landlock (seccomp still denies sockets); elsewhere
(macOS, Windows, kernels without Landlock) there is no sandbox: ``probe`` says why.
"""

from .policy import SandboxMode, SandboxPolicy
from .probe import SandboxSupport, probe, unavailable_notice

__all__ = ["SandboxMode", "SandboxPolicy", "SandboxSupport", "probe", "unavailable_notice"]
