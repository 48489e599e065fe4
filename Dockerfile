# mentatd container image: mentatd, mentat-cli and (when the tree has it)
# mentat-bench on a slim Debian 12 with only the shared libraries they load.
#
#   docker build -t mentatd:0.1.0 .
#   head -c 32 /dev/urandom | base64 > mentatd.token
#   docker run -d --name mentatd -p 7878:7878 -p 7879:7879 \
#     --ulimit nofile=1048576:1048576 \
#     -v "$PWD/mentatd.token:/run/secrets/mentatd-token:ro" \
#     -e MENTATD_AUTH_TOKEN_FILE=/run/secrets/mentatd-token \
#     -v mentatd-data:/var/lib/mentatd mentatd:0.1.0
#
# The container listens on all its interfaces, so mentatd refuses to start
# without a token or TLS (MENTATD_TLS_CERT and MENTATD_TLS_KEY); set
# MENTATD_INSECURE_LISTEN=true only on a network you trust.
#
# An image cannot set its descriptor limit; give it at `docker run`
# (--ulimit, as above). mentatd raises its soft limit to the hard one at
# start, and refuses gRPC connections that would take the last
# --reserved-fds descriptors (docs/deploy.md).
#
# Build arguments:
#   BUILD_TYPE     CMake build type (Release; RelWithDebInfo keeps symbols)
#   JOBS           parallel compile jobs (2)
#   VERSION        the image's version label (the project version)
#   REVISION       the source revision label (a git commit)
#   BASE_IMAGE     image of the build stage (debian:12)
#   RUNTIME_IMAGE  image of the runtime stage (debian:12-slim)
# deploy/container/check.sh builds this file with podman from a local
# debootstrap root by overriding BASE_IMAGE and RUNTIME_IMAGE.
ARG BASE_IMAGE=debian:12
ARG RUNTIME_IMAGE=debian:12-slim

# --- build: the same install script and CMake build as the README ---------
FROM ${BASE_IMAGE} AS build
ARG BUILD_TYPE=Release
ARG JOBS=2
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# The dependency layer depends only on the install script, so source edits
# rebuild from here on without reinstalling packages.
COPY deploy/install-deps.sh deploy/install-deps.sh
RUN bash deploy/install-deps.sh run && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE}" \
 && targets="mentatd mentat-cli" \
 && if cmake --build build --target help | grep -qE '^mentat-bench[: ]'; then \
      targets="$targets mentat-bench"; fi \
 && cmake --build build -j"${JOBS}" --target $targets \
 && mkdir -p /out/bin \
 && cp build/server/mentatd build/client/mentat-cli /out/bin/ \
 && if [ -x build/bench/mentat-bench ]; then \
      cp build/bench/mentat-bench /out/bin/; fi \
 && if [ "${BUILD_TYPE}" = Release ]; then strip --strip-unneeded /out/bin/*; fi \
 && bash deploy/container/runtime-packages.sh /out/bin/* \
      > /out/runtime-packages.txt \
 && cat /out/runtime-packages.txt

# --- runtime -------------------------------------------------------------
FROM ${RUNTIME_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG BUILD_TYPE=Release
LABEL org.opencontainers.image.title="mentatd" \
      org.opencontainers.image.description="Datomic-style database server: datoms in RocksDB, Datalog over gRPC" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="debian:12-slim" \
      io.mentat.build-type="${BUILD_TYPE}"
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=build /out/runtime-packages.txt /tmp/runtime-packages.txt
# tini is PID 1: it forwards SIGTERM to mentatd (which shuts down
# gracefully and exits 0) and reaps zombies.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends tini ca-certificates \
      $(cat /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --system --gid 10001 mentatd \
 && useradd --system --uid 10001 --gid mentatd --no-create-home \
      --home-dir /var/lib/mentatd --shell /usr/sbin/nologin mentatd \
 && install -d -o mentatd -g mentatd -m 0750 /var/lib/mentatd
COPY --from=build /out/bin/ /usr/local/bin/
# Every flag has a MENTATD_* variable; `docker run ... mentatd-image --help`
# lists them. The ports listen on all interfaces inside the container.
ENV MENTATD_DATA_DIR=/var/lib/mentatd \
    MENTATD_LISTEN=0.0.0.0:7878 \
    MENTATD_HTTP=0.0.0.0:7879 \
    MENTAT_ADDR=127.0.0.1:7878
USER mentatd:mentatd
WORKDIR /var/lib/mentatd
VOLUME ["/var/lib/mentatd"]
EXPOSE 7878 7879
STOPSIGNAL SIGTERM
# The standard grpc.health.v1 service (needs no token). With TLS on, give
# the check --tls-ca and an address the certificate names (docs/deploy.md).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/mentat-cli", "health"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/mentatd"]
