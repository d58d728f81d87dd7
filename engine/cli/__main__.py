"""`python -m engine.cli ...` runs `meridian ...`.

After a successful command the process leaves the objects still alive to the operating system:
`gc.freeze()` keeps the interpreter's exit from collecting (and freeing) every module's objects, about
0.3 s of CPU after an HPC2N replay. Exit handlers, the closing of files and the flushing of stdout and
stderr run as usual; the commands close their databases themselves. A failed command exits as before.
"""
import gc
import sys

from engine.cli.main import main

code = main()
if code == 0:
    gc.freeze()
sys.exit(code)
