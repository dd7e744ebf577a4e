"""Network in the sandbox: denied (read-only's default, or ``network = false``), a connect to a
listener on 127.0.0.1 fails (TCP through Landlock and seccomp, UDP and Unix sockets through
seccomp) and the listener sees nobody; allowed (workspace-write's default), the same connect works."""

from __future__ import annotations

import socket
import sys
import threading

from agent.sandbox import SandboxMode

from .conftest import needs_sandbox, prove_active, run_sandboxed

pytestmark = needs_sandbox


def _listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(3.0)
    accepted: list[object] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    return server, accepted


def test_network_denied_connect_to_localhost_listener_fails(machine):
    server, accepted = _listener()
    port = server.getsockname()[1]
    policy = machine.policy(SandboxMode.READ_ONLY)
    prove_active(machine, policy)
    tcp = run_sandboxed(machine, policy, f"{sys.executable} -c \"import socket; "
                                         f"socket.create_connection(('127.0.0.1', {port}), timeout=2)\"")
    dev_tcp = run_sandboxed(machine, policy, f"echo hi > /dev/tcp/127.0.0.1/{port}")
    udp = run_sandboxed(machine, policy, f"{sys.executable} -c \"import socket; "
                                         f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\"")
    server.close()
    assert accepted == []
    for out in (tcp, dev_tcp, udp):
        assert "[exit code: 0]" not in out.text, out.text
        assert "Permission denied" in out.text
    assert "; the network is off" in tcp.text  # the refusal note names the network


def test_network_denied_in_workspace_write_when_configured(machine):
    server, accepted = _listener()
    port = server.getsockname()[1]
    policy = machine.policy(SandboxMode.WORKSPACE_WRITE, network=False)
    out = run_sandboxed(machine, policy, f"echo hi > /dev/tcp/127.0.0.1/{port}")
    server.close()
    assert accepted == [] and "Permission denied" in out.text


def test_network_allowed_connect_works(machine):
    server, accepted = _listener()
    port = server.getsockname()[1]
    policy = machine.policy(SandboxMode.WORKSPACE_WRITE)
    out = run_sandboxed(machine, policy, f"echo hi > /dev/tcp/127.0.0.1/{port} && echo connected")
    server.close()
    assert "connected" in out.text and "[exit code: 0]" in out.text


def test_unix_socket_to_a_daemon_is_refused(machine):
    path = machine.root / "daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    policy = machine.policy(SandboxMode.WORKSPACE_WRITE)
    out = run_sandboxed(machine, policy, f"{sys.executable} -c \"import socket; "
                                         f"socket.socket(socket.AF_UNIX).connect('{path}')\"")
    server.close()
    assert "PermissionError" in out.text and "[exit code: 1]" in out.text
