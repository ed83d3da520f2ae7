"""System plumbing: mechanisms with no policy (files, programs, control groups, pipes), below
everything of changeup.

Nothing here imports the rest of ``orchestrator``; every layer above may import it. Each module
does one thing to the machine and says plainly when the machine will not let it.

- :mod:`orchestrator.system.agentfiles`: files an agent can reach, handled at arm's length.
- :mod:`orchestrator.system.folderwatch`: inotify on exactly the folders of a tree, no link followed.
- :mod:`orchestrator.system.pipes`: a results pipe only the runner holds.
- :mod:`orchestrator.system.cgroups`: a control group for a tree of processes.
- :mod:`orchestrator.system.hierarchies`: where control groups can be made on this machine.
- :mod:`orchestrator.system.keeper`: a process that empties and removes control groups once their
  owner is gone (``keeper_program.py`` is its program).
- :mod:`orchestrator.system.footprint`: disk taken under folders, full private mounts.
- :mod:`orchestrator.system.forkserver`: a process that has done its imports, forking a child per request.
- :mod:`orchestrator.system.closure`: a program with what it needs to run (libraries, packages).
- :mod:`orchestrator.system.bubblewrap`: bubblewrap's and setpriv's arguments, and whether bubblewrap runs.
- :mod:`orchestrator.system.processes`: child processes that die with their run; ``reaper``
  outside bubblewrap.
- :mod:`orchestrator.system.git`: the neutral git: nothing of the agent's runs on the host.
- :mod:`orchestrator.system.venvs`: the grading and agent virtual environments, built once, sealed.
- :mod:`orchestrator.system.toolsets`: the tools and system data a challenge's tests declare.
- :mod:`orchestrator.system.runtime`: the private runtime a hidden test run sees instead of the machine.
- :mod:`orchestrator.system.interpreters`: the Python a challenge's ``requires_python`` asks for.

The package exports nothing itself: import from the module (so that using one loads only it).
"""
