"""Start and stop a throwaway PostgreSQL + PostGIS server on loopback, for the registry tests.

Standard library only, so ``.ci/run`` can call it before the virtual environment exists::

    python3 tests/pg_server.py start DIR   # prints the postgresql:// URL
    python3 tests/pg_server.py stop DIR

The cluster lives in DIR and checks passwords as a production server does: scram-sha-256
for every login over TCP and through its socket folder, the owner ``esc`` with a password made
here (it travels in the printed URL). Loopback only, a free port. ``start DIR --tls`` also makes
a certificate authority and a server certificate with openssl and requires TLS over TCP. As root,
the server runs as the ``postgres`` user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

USER = "esc"
DB = "esc_test"


def bindir() -> Path | None:
    """The directory holding initdb and pg_ctl (Debian keeps them out of PATH), or None."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    return Path(dirs[-1]) if dirs and (Path(dirs[-1]) / "initdb").exists() else None


def has_postgis(bin_dir: Path) -> bool:
    """Whether the PostGIS extension is installed for this server version."""
    share = subprocess.run([str(bin_dir / "pg_config"), "--sharedir"], capture_output=True, text=True, check=False)
    root = Path(share.stdout.strip()) if share.returncode == 0 else Path(f"/usr/share/postgresql/{bin_dir.parent.name}")
    return any((root / "extension").glob("postgis.control"))


def _run(cmd: list[str], *, as_postgres: bool) -> None:
    if as_postgres:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _certificates(root: Path, as_postgres: bool) -> None:
    """Make ``root/ca.pem`` (a certificate authority) and a server certificate it signed for 127.0.0.1."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl is not installed (apt-get install openssl): TLS needs a certificate.")

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, cwd=root, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=esc_gis test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    )
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out", "server.csr")
    (root / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n", encoding="utf-8")
    run(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
    )
    (root / "server.key").chmod(0o600)  # PostgreSQL refuses a key others may read
    if as_postgres:
        for name in ("server.key", "server.crt", "ca.pem"):
            shutil.chown(root / name, "postgres", "postgres")


def start(folder: str | os.PathLike[str], *, tls: bool = False) -> str:
    """Create a cluster in ``folder``, start it on loopback, make the test database; return its URL.

    Every login needs its password (scram-sha-256); the owner's is made here and is in the URL.
    With ``tls``, TCP connections must use TLS, with a certificate ``folder/ca.pem`` signed
    (the URL then asks ``sslmode=verify-full`` with that root).

    Raises
    ------
    RuntimeError
        If PostgreSQL or PostGIS is not installed.
    subprocess.CalledProcessError
        If the server fails to start (its log is ``folder/log``).
    """
    bin_dir = bindir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql-15 postgresql-15-postgis-3).")
    if not has_postgis(bin_dir):
        raise RuntimeError("PostGIS is not installed (apt-get install postgresql-15-postgis-3).")
    root = Path(folder).resolve()
    data = root / "data"
    root.mkdir(parents=True, exist_ok=True)
    as_postgres = os.geteuid() == 0
    if as_postgres:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()
    password = secrets.token_hex(16)
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n", encoding="utf-8")
    if as_postgres:
        shutil.chown(pwfile, "postgres", "postgres")
    try:
        init = [str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-E", "UTF8", "--no-sync"]
        _run([*init, "-A", "scram-sha-256", f"--pwfile={pwfile}"], as_postgres=as_postgres)
    finally:
        pwfile.unlink(missing_ok=True)
    opts = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
    query = ""
    if tls:
        _certificates(root, as_postgres)
        opts += f" -c ssl=on -c ssl_cert_file={root / 'server.crt'} -c ssl_key_file={root / 'server.key'}"
        # TCP logins must come over TLS; the socket folder (the owner's createdb below) need not.
        hba = data / "pg_hba.conf"
        lines = hba.read_text(encoding="utf-8").splitlines()
        hba.write_text(
            "\n".join(ln.replace("host ", "hostssl ", 1) if ln.startswith("host ") else ln for ln in lines) + "\n",
            encoding="utf-8",
        )
        query = f"?sslmode=verify-full&sslrootcert={root / 'ca.pem'}"
    _run(
        [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-o", opts, "-w", "start"],
        as_postgres=as_postgres,
    )
    env = dict(os.environ, PGPASSWORD=password)
    cmd = [str(bin_dir / "createdb"), "-h", str(root), "-p", str(port), "-U", USER, DB]
    subprocess.run(
        (["runuser", "-u", "postgres", "--"] if as_postgres else []) + cmd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    url = f"postgresql://{USER}:{password}@127.0.0.1:{port}/{DB}{query}"
    (root / "url").write_text(url, encoding="utf-8")
    return url


def stop(folder: str | os.PathLike[str]) -> None:
    """Stop the server in ``folder`` and remove it."""
    root = Path(folder).resolve()
    bin_dir = bindir()
    if bin_dir is not None and (root / "data").exists():
        subprocess.run(
            (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else [])
            + [str(bin_dir / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate", "-w", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("start", "stop") or sys.argv[3:] not in ([], ["--tls"]):
        sys.exit("usage: pg_server.py start|stop DIR [--tls]")
    if sys.argv[1] == "start":
        print(start(sys.argv[2], tls=sys.argv[3:] == ["--tls"]))
    else:
        stop(sys.argv[2])
