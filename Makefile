# pdtopo — see README.md. `make run` and `make test` are the two set-up commands.

SHELL := /usr/bin/env bash -o pipefail
GO ?= go
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(GO) tool controller-gen
# The real control plane (kube-apiserver, etcd) behind `make run` and envtest,
# built once from the Go module proxy by the separate hack/controlplane module.
export KUBEBUILDER_ASSETS := $(BIN)
CONTROLPLANE := $(BIN)/kube-apiserver $(BIN)/etcd
TEST_FLAGS ?= -count=1 -timeout 40m
# VERSION is stamped into every binary (`--version`); default: git describe.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO_LDFLAGS := -ldflags "-X github.com/pdtopo/pdtopo/internal/version.Version=$(VERSION)"
IMG ?= ghcr.io/pdtopo/manager:dev
AGENT_IMG ?= ghcr.io/pdtopo/receiver-agent:dev

.PHONY: all
all: build

##@ Development

.PHONY: fmt
fmt: ## Format the code.
	$(GO) fmt ./...

.PHONY: vet
vet: ## Vet the code.
	$(GO) vet ./...

.PHONY: manifests
manifests: ## Generate the CRD, RBAC and webhook configurations from markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./api/...;./controllers/...;./webhooks/...;./cmd/manager/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook
	@# The chart renders these files' contents (charts/pdtopo/files/README.md).
	cp config/crd/bases/pd.pdtopo.dev_pdpairs.yaml charts/pdtopo/files/crds/
	cp config/rbac/role.yaml charts/pdtopo/files/generated/rbac-role.yaml
	cp config/webhook/manifests.yaml charts/pdtopo/files/generated/webhook-manifests.yaml
	cp config/namespaced/role.yaml charts/pdtopo/files/generated/namespaced-role.yaml
	$(GO) run ./hack/api-docs > docs/api-reference.md
	$(GO) run ./hack/cli-docs > docs/cli-reference.md

.PHONY: api-docs
api-docs: ## Write docs/api-reference.md from the generated CRD (make manifests does it too).
	$(GO) run ./hack/api-docs > docs/api-reference.md

.PHONY: cli-docs
cli-docs: ## Write docs/cli-reference.md from pdtopo's commands (make manifests does it too).
	$(GO) run ./hack/cli-docs > docs/cli-reference.md

.PHONY: generate
generate: ## Generate deepcopy code from markers.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths="./api/..."

.PHONY: build
build: ## Build the manager, the pdtopo CLI and the receiver agent into bin/.
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/ ./cmd/...

.PHONY: test
test: lint controlplane $(BIN)/kubectl $(BIN)/helm ## Run the linters, then every test against a real kube-apiserver and etcd.
	$(GO) vet ./...
	$(GO) test $(TEST_FLAGS) ./...

.PHONY: bench
bench: ## Run the benchmarks.
	$(GO) test -run '^$$' -bench . -benchmem ./...

##@ Local control plane

.PHONY: controlplane
controlplane: $(CONTROLPLANE) ## Build kube-apiserver and etcd once (about 12 minutes the first time).

# The version kube-apiserver and kubectl report (/version, `kubectl version`),
# stamped as Kubernetes' own release build does: without it they say
# v0.0.0-master, and tools that check the server's version (Helm's
# kubeVersion, for one) refuse it.
KUBE_VERSION := $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2; exit }' hack/controlplane/go.mod 2>/dev/null)
KUBE_LDFLAGS := -ldflags "-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitTreeState=clean"

$(BIN)/kube-apiserver: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build $(KUBE_LDFLAGS) -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(BIN)/etcd: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -o $@ go.etcd.io/etcd/server/v3

$(BIN)/kubectl: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build $(KUBE_LDFLAGS) -o $@ k8s.io/kubernetes/cmd/kubectl

$(BIN)/helm: hack/helm/go.mod hack/helm/go.sum
	cd hack/helm && $(GO) build -o $@ helm.sh/helm/v4/cmd/helm

# golangci-lint v2 with the Kube API Linter built in, from the pinned tools
# module hack/lint (kube-api-linter's own golangci-lint command): about 6
# CPU-minutes to build from a cold Go build cache, seconds after that.
$(BIN)/golangci-lint-kal: hack/lint/go.mod hack/lint/go.sum
	cd hack/lint && $(GO) build -o $@ sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter

# Both configurations set the run's timeout and a concurrency of 2.
.PHONY: lint
lint: $(BIN)/golangci-lint-kal lint-python ## Run golangci-lint (.golangci.yml), the Kube API Linter on api/ (.golangci-kal.yml) and lint-python; `make test` runs it first.
	$(BIN)/golangci-lint-kal run ./...
	$(BIN)/golangci-lint-kal run --config .golangci-kal.yml ./api/...

# The first python3 (on PATH, then the system's) that has mypy and flake8:
# Debian's python3-mypy and flake8 are modules of /usr/bin/python3, which a
# pyenv python3 first on PATH does not see. PYTHON_LINT=... picks another.
# Looked up once, when lint-python first needs it (not on every make).
PYTHON_LINT ?= $(eval PYTHON_LINT := $(shell for p in python3 /usr/bin/python3; do \
	$$p -c 'import mypy, flake8' >/dev/null 2>&1 && { command -v $$p; break; }; done))$(PYTHON_LINT)

.PHONY: lint-python
lint-python: ## Type-check (mypy --strict) and lint (flake8) clients/python: the adapter, its tests and benchmarks (setup.cfg).
	@[ -n "$(PYTHON_LINT)" ] || { echo "lint-python: no python3 with mypy and flake8 (Debian: apt-get install python3-mypy flake8; else pip install mypy flake8), or set PYTHON_LINT" >&2; exit 1; }
	cd clients/python && $(PYTHON_LINT) -m mypy
	@# the package alone against the oldest Python pyproject.toml allows
	cd clients/python && $(PYTHON_LINT) -m mypy --python-version 3.10 -p pdtopo_agent
	cd clients/python && $(PYTHON_LINT) -m flake8
	@# the chaos suite's engine rank, an adapter user
	cd clients/python && $(PYTHON_LINT) -m mypy ../../test/chaos/driver.py && $(PYTHON_LINT) -m flake8 ../../test/chaos/driver.py

.PHONY: helm
helm: $(BIN)/helm ## Build bin/helm (Helm v4, from the hack/helm module) for the chart's tests and `make helm-package`.

.PHONY: kubectl
kubectl: $(BIN)/kubectl ## Build bin/kubectl (then: bin/kubectl --kubeconfig bin/local.kubeconfig get pdp).

.PHONY: run
run: controlplane $(BIN)/kubectl manifests ## Run etcd, kube-apiserver, the manager, a sample decode pod's agent and a prefill peer locally, driving KV handshakes; Ctrl-C stops all.
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/manager ./cmd/manager
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/receiver-agent ./cmd/receiver-agent
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/prefill-peer ./cmd/prefill-peer
	$(GO) build -o $(BIN)/run-local ./hack/run-local
	$(BIN)/run-local $(RUN_ARGS)

.PHONY: rollout-demo
rollout-demo: controlplane manifests ## Roll one pair's prefill (TP 8 → 4) and decode (TP 4 → 2) under traffic on the local control plane; exits non-zero if a room fails.
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/manager ./cmd/manager
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/receiver-agent ./cmd/receiver-agent
	$(GO) build $(GO_LDFLAGS) -o $(BIN)/prefill-peer ./cmd/prefill-peer
	$(GO) build -o $(BIN)/run-local ./hack/run-local
	$(BIN)/run-local --rollout $(RUN_ARGS)

##@ Cluster (uses the current kubeconfig; KUBECTL=kubectl to use your own)

KUBECTL ?= $(BIN)/kubectl
# Build bin/kubectl only when it is the kubectl in use.
KUBECTL_DEP := $(filter $(BIN)/kubectl,$(KUBECTL))

.PHONY: install
install: manifests $(KUBECTL_DEP) ## Install the PDPair CRD into the current cluster.
	$(KUBECTL) apply --server-side -k config/crd

.PHONY: uninstall
uninstall: $(KUBECTL_DEP) ## Remove the PDPair CRD (and every PDPair) from the current cluster.
	$(KUBECTL) delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: build-installer ## Deploy the operator (dist/install.yaml for IMG and AGENT_IMG) to the current cluster.
	$(KUBECTL) apply --server-side -f $(INSTALL_YAML)

.PHONY: undeploy
undeploy: $(KUBECTL_DEP) ## Remove everything `make deploy` created.
	@# Nothing is waited for: the namespace's finalizer belongs to the namespace
	@# controller, which a local control plane does not run, and the objects in
	@# it are deleted one by one anyway. In a cluster it terminates on its own.
	$(KUBECTL) kustomize config/default | $(KUBECTL) delete --ignore-not-found --wait=false -f -

##@ Release

INSTALLER_DIR ?= dist/installer
INSTALL_YAML ?= dist/install.yaml

.PHONY: build-installer
build-installer: manifests $(KUBECTL_DEP) ## Write dist/install.yaml (CRD, RBAC, manager, webhooks, certificate Secret) for IMG and AGENT_IMG.
	$(GO) run ./hack/installer --img $(IMG) --agent-img $(AGENT_IMG) --base config/default --out $(INSTALLER_DIR)
	@mkdir -p $(dir $(INSTALL_YAML))
	$(KUBECTL) kustomize $(INSTALLER_DIR) > $(INSTALL_YAML)

CHART_DIR := charts/pdtopo

.PHONY: helm-package
helm-package: manifests $(BIN)/helm ## Package charts/pdtopo into dist/ with appVersion VERSION (the images' default tag).
	@mkdir -p dist
	$(BIN)/helm lint --strict $(CHART_DIR)
	$(BIN)/helm package $(CHART_DIR) --app-version $(VERSION) --destination dist

##@ Images

CONTAINER_TOOL ?= docker

.PHONY: docker-build
docker-build: ## Build the manager (IMG) and receiver-agent (AGENT_IMG) images.
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --target manager -t $(IMG) .
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --target receiver-agent -t $(AGENT_IMG) .

# docker-buildx builds and pushes both images for every platform in
# PLATFORMS with a throwaway buildx builder. The manager cross-compiles on the
# build machine (pure Go); the agent links libzmq, so it builds on each target
# platform (emulated by QEMU where the machine's architecture differs).
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: docker-buildx
docker-buildx: ## Build and push both images for PLATFORMS (linux/amd64,linux/arm64) with docker buildx.
	- $(CONTAINER_TOOL) buildx create --name pdtopo-builder
	$(CONTAINER_TOOL) buildx use pdtopo-builder
	$(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) --build-arg VERSION=$(VERSION) --target manager -t $(IMG) .
	$(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) --build-arg VERSION=$(VERSION) --target receiver-agent -t $(AGENT_IMG) .
	- $(CONTAINER_TOOL) buildx rm pdtopo-builder

.PHONY: docker-push
docker-push: ## Push both images.
	$(CONTAINER_TOOL) push $(IMG)
	$(CONTAINER_TOOL) push $(AGENT_IMG)

##@ kubectl plugin

PLUGIN_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: plugin-dist
plugin-dist: ## Build kubectl-pdtopo archives for PLUGIN_PLATFORMS into dist/ and the krew manifest dist/pdtopo.yaml (VERSION=vX.Y.Z).
	@[[ "$(VERSION)" =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "plugin-dist: set VERSION to a release tag, e.g. make plugin-dist VERSION=v0.1.0"; exit 2; }
	rm -rf dist/plugin && mkdir -p dist/plugin
	for p in $(PLUGIN_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; d=dist/plugin/$$os-$$arch; mkdir -p $$d; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(GO_LDFLAGS) -o $$d/kubectl-pdtopo ./cmd/pdtopo && \
	  cp LICENSE $$d/ && tar -C $$d -czf dist/kubectl-pdtopo_$${os}_$${arch}.tar.gz kubectl-pdtopo LICENSE || exit 1; \
	done
	$(GO) run ./hack/krew-manifest --version $(VERSION) --dist dist > dist/pdtopo.yaml

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9\/.$$()-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Conformance: local checks against the reference engine's own code (conformance/README.md; not CI)

.PHONY: conformance-tokenspeed
conformance-tokenspeed: ## Hold both wires and the agent's rank moves to tokenspeed's own code at the reference commits (TOKENSPEED_GIT_DIR=a clone).
	@test -n "$(TOKENSPEED_GIT_DIR)" || { echo "set TOKENSPEED_GIT_DIR to a git directory of lightseekorg/tokenspeed" >&2; exit 2; }
	conformance/tokenspeed/v1wire/run.sh $(TOKENSPEED_GIT_DIR)
	conformance/tokenspeed/contractwire/interop.sh $(TOKENSPEED_GIT_DIR)
	conformance/tokenspeed/rankmove/run.sh $(TOKENSPEED_GIT_DIR)

.PHONY: test-chaos
test-chaos: ## Run the chaos suite (test/chaos) for CHAOS_DURATION (default 10m) with CHAOS_SEED (default: the clock); make test runs it for 60s.
	PDTOPO_CHAOS_DURATION=$(or $(CHAOS_DURATION),10m) PDTOPO_CHAOS_SEED=$(CHAOS_SEED) $(GO) test -count=1 -timeout $(or $(CHAOS_TIMEOUT),30m) -run '^TestChaos$$' -v ./test/chaos/

##@ Operator: controller, plan store, scale (owned by the operator work; see docs/benchmarks.md)

.PHONY: test-operator
test-operator: controlplane ## Run the operator's tests: planstore, the envtest suite, the generated-files check.
	$(GO) test $(TEST_FLAGS) ./pkg/planstore/... ./controllers/... ./api/... ./cmd/manager/...

.PHONY: fuzz-planstore
fuzz-planstore: ## Fuzz the plan loader (bytes from a volume are untrusted) for FUZZTIME.
	$(GO) test -run '^$$' -fuzz FuzzLoadRank -fuzztime $(or $(FUZZTIME),60s) -fuzzminimizetime 2s ./pkg/planstore/

.PHONY: bench-scale
bench-scale: controlplane ## 500 PDPairs of mixed layouts at once against a real API server and the manager binary.
	PDTOPO_SCALE=1 $(GO) test -count=1 -timeout 20m -run '^TestScale$$' -v ./test/integration/manager/

.PHONY: bench-manager-scale
bench-manager-scale: controlplane ## 5,000 PDPairs whose bootstrap servers answer the largest answers the limits admit: the manager's peak RSS and time to settle.
	PDTOPO_MANAGER_SCALE=1 $(GO) test -count=1 -timeout 30m -run '^TestLiveReadsAtScale$$' -v ./test/integration/manager/

.PHONY: bench-fleet
bench-fleet: controlplane ## 1,000 agents' API plan sources: time from a PDPair edit to every agent's load, and the API server's cost.
	PDTOPO_FLEET=1 $(GO) test -count=1 -timeout 20m -run '^TestFleet' -v ./test/integration/fleet/
