"""Start and stop a throwaway PostgreSQL + PostGIS server on loopback, for the registry tests.

Standard library only, so ``.ci/run`` can call it before the virtual environment exists::

    python3 tests/pg_server.py start DIR   # prints the postgresql:// URL
    python3 tests/pg_server.py stop DIR

The cluster lives in DIR (trust authentication, loopback only, a free port). As root,
the server runs as the ``postgres`` user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
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


def start(folder: str | os.PathLike[str]) -> str:
    """Create a cluster in ``folder``, start it on loopback, make the test database; return its URL.

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
    _run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8", "--no-sync"],
        as_postgres=as_postgres,
    )
    opts = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
    _run(
        [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-o", opts, "-w", "start"],
        as_postgres=as_postgres,
    )
    _run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, DB], as_postgres=as_postgres)
    url = f"postgresql://{USER}@127.0.0.1:{port}/{DB}"
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
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit("usage: pg_server.py start|stop DIR")
    if sys.argv[1] == "start":
        print(start(sys.argv[2]))
    else:
        stop(sys.argv[2])
