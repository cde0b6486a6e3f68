# Registry path for the base image (a laptop or hosted CI that can pull):
# the same layout as the debootstrap path in build-images.sh.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      default-jre-headless iptables procps iproute2 faketime \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
