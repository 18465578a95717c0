# The image of one engine build (or of its Google Benchmark harness), one per build key, built by
# orchestrator/build/container_image.py from a staged rootfs/ folder and never pulled (no image
# registry is reachable from the machines Tidemark targets):
#   - the benchmark binary at the same absolute path as on the host, so a command line reads the
#     same on both runners;
#   - every shared library `ldd` lists for it, and the dynamic loader;
#   - /usr/local/bin/tidemark-exec (docker/tidemark-exec.c), the container's PID 1, which reads
#     the limits back inside the container and reports the engine's rusage;
#   - valgrind's launcher (Debian's valgrind.bin, without its shell wrapper: the runner sets the
#     wrapper's environment) and the callgrind tool, for callgrind=true steps.
FROM scratch
COPY rootfs/ /
