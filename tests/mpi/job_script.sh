#!/bin/sh
# A job script as users write them: it starts the MPI program without exec
# and does something after it. Traced as `mpirun adaptrace job_script.sh
# PROGRAM ARGS...`, the program's ranks must be measured, not the shell.
"$@"
status=$?
echo "job script: the program ended with status $status"
exit $status
