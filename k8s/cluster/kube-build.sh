# shellcheck shell=bash
# Sourced by install.sh and install-node.sh.
#
#   kube_required MODULE
#
# prints the version kube/go.mod requires of MODULE: one place to bump them.
#
#   kube_build VERSION OUTDIR CMD...
#
# builds k8s.io/kubernetes/cmd/<CMD> of kube/go.mod into OUTDIR, stamped with VERSION as
# Kubernetes' own build stamps it (hack/lib/version.sh), which `--version` reports. At the
# lowest priority (a cold build takes many minutes on 2 CPUs), without cgo, and -mod=readonly:
# kube/go.mod and go.sum as committed, nothing resolved anew.
kube_required() {
  awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$(dirname "${BASH_SOURCE[0]}")/kube/go.mod"
}

kube_build() {
  local version="$1" out="$2" p
  shift 2
  local minor="${version#v1.}" ldflags="-s -w"
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags="$ldflags -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=${minor%%.*}"
  done
  (cd "$(dirname "${BASH_SOURCE[0]}")/kube" &&
    CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off nice -n 19 go build -trimpath -ldflags "$ldflags" -o "$out/" "${@/#/k8s.io/kubernetes/cmd/}")
}
