# syntax=docker/dockerfile:1
#
# Two images from one Dockerfile; build each with its target:
#   docker build --target manager        -t ghcr.io/pdtopo/manager:dev .
#   docker build --target receiver-agent -t ghcr.io/pdtopo/receiver-agent:dev .
# (`make docker-build` runs both.) BuildKit builds only the stages a target needs.

ARG GO_VERSION=1.26.8

# The manager is pure Go: it cross-compiles on the build machine's platform
# for each target (`make docker-buildx` builds linux/amd64 and linux/arm64),
# with no emulation.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build-manager
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY . .
# VERSION is stamped into the binaries (`--version`); `make docker-build`
# passes it. TARGETOS/TARGETARCH are set by BuildKit. An ARG lives in one
# stage, so each build stage declares its own.
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w -X github.com/pdtopo/pdtopo/internal/version.Version=${VERSION}" -o /out/manager ./cmd/manager

# The agent links libzmq through cgo, so it builds on the target platform
# itself (under QEMU when buildx builds a foreign architecture), with the
# target's libzmq headers.
FROM golang:${GO_VERSION}-bookworm AS builder
RUN apt-get update \
 && apt-get install -y --no-install-recommends libzmq3-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY . .

FROM builder AS build-receiver-agent
ARG VERSION=dev
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath -ldflags="-s -w -X github.com/pdtopo/pdtopo/internal/version.Version=${VERSION}" -o /out/receiver-agent ./cmd/receiver-agent

# The decode-side agent: needs libzmq at run time, so a slim Debian matching
# the builder's glibc rather than a static image.
FROM debian:bookworm-slim AS receiver-agent
RUN apt-get update \
 && apt-get install -y --no-install-recommends libzmq5 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build-receiver-agent /out/receiver-agent /receiver-agent
USER 65532:65532
ENTRYPOINT ["/receiver-agent"]

# The operator: a static binary on distroless, non-root (uid 65532), no shell.
# Last, so a plain `docker build .` builds the manager.
FROM gcr.io/distroless/static-debian12:nonroot AS manager
COPY --from=build-manager /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
