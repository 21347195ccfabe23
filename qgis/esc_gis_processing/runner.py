"""Run ``esc-gis`` in a subprocess, streaming what it writes into the Processing feedback.

As the GRASS and SAGA providers do, QGIS's Python never imports esc_gis: the toolkit's
wheels (GDAL, PROJ, shapely) need not match QGIS's own.
"""

import os
import queue
import re
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from qgis.core import QgsProcessingException, QgsSettings

#: Name of the provider setting (ProcessingConfig stores it under Processing/Configuration/).
SETTING = "ESC_GIS_EXECUTABLE"


def default_executable():
    """``esc-gis`` on PATH, else the repository's ``.venv/bin/esc-gis`` (plugin run from a checkout), else ''."""
    found = shutil.which("esc-gis")
    if found:
        return found
    here = Path(__file__).resolve().parent
    for venv in (here.parents[1] / ".venv",):  # repo/qgis/esc_gis_processing -> repo/.venv
        for exe in (venv / "bin" / "esc-gis", venv / "Scripts" / "esc-gis.exe"):
            if exe.is_file():
                return str(exe)
    return ""


def executable():
    """Return the esc-gis to run: the provider setting, else :func:`default_executable`.

    Raises
    ------
    QgsProcessingException
        When neither names a program that exists, with the fix.
    """
    value = ""
    try:
        from processing.core.ProcessingConfig import ProcessingConfig

        value = ProcessingConfig.getSetting(SETTING) or ""
    except ImportError:
        pass
    if not value:
        value = QgsSettings().value("Processing/Configuration/" + SETTING, "") or ""
    value = str(value).strip() or default_executable()
    if not value or not (os.path.isfile(value) or shutil.which(value)):
        raise QgsProcessingException(
            f"esc-gis not found ({value or 'not on PATH'}): install the esc_gis wheel (`make wheel` in a clone; "
            "pip install esc_gis-<version>-py3-none-any.whl) and set its "
            "path in Processing > Options > Providers > esc_gis > esc-gis executable."
        )
    return value


def _pump(stream, name, lines):
    for line in iter(stream.readline, ""):
        lines.put((name, line.rstrip("\n")))
    stream.close()
    lines.put((name, None))


def run_esc_gis(args, feedback):
    """Run ``esc-gis ARGS``; stdout goes to ``pushInfo``, stderr to ``reportError``, as written.

    Returns the exit status 0; the subprocess is killed when the user cancels.

    Raises
    ------
    QgsProcessingException
        When esc-gis is missing, exits with an error (its message is already in the log), or
        was cancelled.
    """
    # Plain progress lines (``PROGRESS 42%``) the log does not show: they move the dialog's bar.
    cmd = [executable(), "--progress", "plain", *args]
    feedback.pushCommandInfo(" ".join(_quote(a) for a in cmd))
    # Plain text, no colours, a log-wide table; no progress bar animates off a terminal.
    env = dict(os.environ, NO_COLOR="1", TERM="dumb", COLUMNS="100", PYTHONIOENCODING="utf-8")
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
        # Its own process group, so Cancel stops esc-gis and anything it started (a child holding
        # the pipes open would otherwise keep this loop waiting).
        start_new_session=os.name == "posix",
    )
    lines = queue.Queue()
    for stream, name in ((proc.stdout, "out"), (proc.stderr, "err")):
        threading.Thread(target=_pump, args=(stream, name, lines), daemon=True).start()
    open_streams, errors, cancelled = 2, [], False
    # Feedback is touched from this (the algorithm's) thread only; the readers just queue lines.
    while open_streams:
        if feedback.isCanceled():
            _kill(proc)
            cancelled = True
            break
        try:
            name, line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        if line is None:
            open_streams -= 1
        elif name == "err" and _PROGRESS.match(line):
            feedback.setProgress(int(_PROGRESS.match(line).group(1)))
        elif name == "out":
            feedback.pushInfo(line)
        elif _is_warning(line):
            # GDAL's and Python's warnings are not errors: QGIS shows them as warnings.
            feedback.pushWarning(line)
        else:
            errors.append(line)
            if line.strip():  # rich's transient progress leaves a blank line on stderr
                feedback.reportError(line, False)
    code = proc.wait()
    if cancelled:
        raise QgsProcessingException("Cancelled: esc-gis was stopped.")
    if code != 0:
        raise QgsProcessingException(f"esc-gis exited with status {code}: {_error_text(errors)}")
    return code


#: What ``esc-gis --progress plain`` says on stderr: ``PROGRESS 42%``.
_PROGRESS = re.compile(r"^PROGRESS (\d{1,3})%$")
#: GDAL's ``Warning 1: ...`` and Python's ``path.py:12: UserWarning: ...``.
_WARNING = re.compile(r"Warning\b|\S+:\d+: \w*Warning: ")


def _is_warning(line):
    """Whether a stderr line is a warning (GDAL's ``Warning 1: ...``, Python's ``...Warning: ...``)."""
    return _WARNING.match(line.lstrip()) is not None


def _error_text(errors, most=40):
    """Return the CLI's whole error: from its last ``Error:`` line on (every problem listed), or its last line."""
    lines = [e.rstrip() for e in errors if e.strip()]
    start = max((i for i, e in enumerate(lines) if e.lstrip().startswith("Error")), default=len(lines) - 1)
    return "\n".join(lines[max(start, 0) :][:most])


def _kill(proc):
    """Kill ``proc`` and its process group (POSIX), or ``proc`` alone (Windows)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass  # already gone


def _quote(arg):
    return f'"{arg}"' if (not arg or any(c in arg for c in " '\"")) else arg


__all__ = ["SETTING", "default_executable", "executable", "run_esc_gis"]
