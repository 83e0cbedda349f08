#!/usr/bin/env bash
# Usage: tests/k8s/make_pki.sh DIR NODE NODE_IP
# Makes the test cluster's certificates in DIR with openssl, new for each cluster (ECDSA P-256,
# valid 7 days): a CA; the apiserver's serving certificate (127.0.0.1, where the host and the
# namespace both reach it, and the in-cluster names); the clients: admin (group system:masters),
# nobody (a valid certificate that no RBAC binding names), the apiserver's client for the
# kubelet (kube-apiserver-kubelet-client), the node (system:node:NODE in system:nodes); the
# kubelet's serving certificate (NODE_IP); and the service-account signing key.
set -euo pipefail
dir=${1:?usage: make_pki.sh DIR NODE NODE_IP}
node=${2:?usage: make_pki.sh DIR NODE NODE_IP}
node_ip=${3:?usage: make_pki.sh DIR NODE NODE_IP}
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"
days=7

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2> /dev/null; }

new_key ca.key
openssl req -x509 -new -key ca.key -out ca.crt -days "$days" -subj "/CN=pybox-k8s-test-ca" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"

# certificate NAME SUBJECT USAGE [SUBJECT_ALT_NAMES]: a key and a certificate signed by the CA.
certificate() {
  local name=$1 subject=$2 usage=$3 alt_names=${4:-}
  new_key "$name.key"
  openssl req -new -key "$name.key" -out "$name.csr" -subj "$subject"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -z "$alt_names" ] || echo "subjectAltName=$alt_names"
  } > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$name.crt" \
    -days "$days" -extfile "$name.ext" 2> /dev/null
  rm -f "$name.csr" "$name.ext"
}
certificate apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
certificate admin "/O=system:masters/CN=pybox-test-admin" clientAuth
certificate nobody "/CN=pybox-test-nobody" clientAuth
certificate apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client" clientAuth
certificate node "/O=system:nodes/CN=system:node:$node" clientAuth
certificate kubelet-serving "/CN=$node" serverAuth "IP:$node_ip,DNS:$node"
new_key sa.key
openssl pkey -in sa.key -pubout -out sa.pub 2> /dev/null
chmod 600 ./*.key
