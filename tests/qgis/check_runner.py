"""Run the plugin's runner (qgis/esc_gis_processing/runner.py) in QGIS's Python on a stand-in esc-gis.

Usage: /usr/bin/python3 check_runner.py FAKE_EXE ARG...; prints one JSON line: what reached the
feedback, the exception's message, and how long it took. With ``cancel`` as the first ARG, the
feedback is cancelled after half a second. QGIS is imported in main() only: pytest's
--doctest-modules imports this file with the venv's Python, which has no qgis.
"""

import json
import sys
import threading
import time
from pathlib import Path


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "qgis"))
    from esc_gis_processing import runner
    from qgis.core import QgsApplication, QgsProcessingException, QgsProcessingFeedback

    class Feedback(QgsProcessingFeedback):
        def __init__(self):
            super().__init__()
            self.lines = []

        def pushInfo(self, info):
            self.lines.append(["info", info])

        def reportError(self, error, fatalError=False):
            self.lines.append(["error", error])

        def pushCommandInfo(self, info):
            self.lines.append(["command", info])

        def pushWarning(self, warning):
            self.lines.append(["warning", warning])

        def setProgress(self, progress):
            self.lines.append(["progress", progress])
            super().setProgress(progress)

    app = QgsApplication([], False)
    app.initQgis()
    exe, args = sys.argv[1], sys.argv[2:]
    runner.executable = lambda: exe
    feedback = Feedback()
    if args and args[0] == "cancel":
        threading.Timer(0.5, feedback.cancel).start()
    start = time.monotonic()
    message = None
    try:
        runner.run_esc_gis(args, feedback)
    except QgsProcessingException as e:
        message = str(e)
    print(json.dumps({"lines": feedback.lines, "exception": message, "seconds": time.monotonic() - start}))


if __name__ == "__main__":
    main()
