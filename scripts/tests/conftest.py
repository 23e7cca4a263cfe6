"""What the test folders of scripts/tests share. Each folder's own set-up is a fixture in its
conftest.py (commands/: pool_legs; ci/: act_world, bare_world, runner_loop_world); the plain
helpers and constants that tests call are modules of support/, imported by name
(`from support.gate_synth import latency_run`): pytest puts this folder, the home of this
conftest.py, on sys.path."""
