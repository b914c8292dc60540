#!/bin/sh
# Packages one built `zidane` binary and the `zidane-worker` built with it as a release
# archive: both binaries, zidane's shell completions and man pages (made by the binary
# itself from its clap definitions), the README, CHANGELOG and licenses, in
# `zidane-<target>/` inside `zidane-<target>.tar.gz` (for a Windows target: `zidane.exe`
# and `zidane-worker.exe` inside `zidane-<target>.zip`, with the same completions,
# PowerShell's among them), with a `<archive>.sha256` beside it. The release workflow
# runs it for every target, the dist tests run it on the binaries they built and
# `cargo xtask windows` on the Windows binaries it built, so what is tested is what
# ships.
#
# usage: dist/package.sh --target <triple> --binary <path> --out <dir>
#                        [--worker <path>] [--assets-from <path>]
#
# --worker names the `zidane-worker` binary; by default the one beside --binary
# (`zidane-worker.exe` for a Windows target). An archive is never made without it.
# --assets-from names a binary that runs on this machine, for the completions and man
# pages when --binary is built for another one (they are the same for every target).
set -eu

target=""
binary=""
worker=""
out=""
assets_from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --worker) worker="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --assets-from) assets_from="$2"; shift 2 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$target" ] || [ -z "$binary" ] || [ -z "$out" ]; then
  echo "usage: dist/package.sh --target <triple> --binary <path> --out <dir> [--worker <path>] [--assets-from <path>]" >&2
  exit 2
fi
[ -f "$binary" ] || { echo "package.sh: no binary at $binary" >&2; exit 1; }
[ -n "$assets_from" ] || assets_from="$binary"
case "$target" in
  *-windows-*) windows=1; exe=zidane.exe; worker_exe=zidane-worker.exe; archive_ext=zip ;;
  *) windows=""; exe=zidane; worker_exe=zidane-worker; archive_ext=tar.gz ;;
esac
[ -n "$worker" ] || worker="$(dirname "$binary")/$worker_exe"
[ -f "$worker" ] || {
  echo "package.sh: no zidane-worker at $worker (build it: cargo build -p zidane-restate --bin zidane-worker; or name it with --worker)" >&2
  exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
name="zidane-$target"
archive="$name.$archive_ext"
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT INT TERM
dir="$stage/$name"
mkdir -p "$dir/completions" "$dir/man/man1"

# Artifacts passed between CI jobs lose their mode bits: set them here.
cp "$binary" "$dir/$exe"
cp "$worker" "$dir/$worker_exe"
chmod 755 "$dir/$exe" "$dir/$worker_exe"

"$assets_from" completions powershell > "$dir/completions/_zidane.ps1"
"$assets_from" completions bash > "$dir/completions/zidane.bash"
"$assets_from" completions zsh > "$dir/completions/_zidane"
"$assets_from" completions fish > "$dir/completions/zidane.fish"
"$assets_from" completions elvish > "$dir/completions/zidane.elv"
"$assets_from" man --out-dir "$dir/man/man1"

for file in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE; do
  cp "$root/$file" "$dir/"
done

# Sorted names, no owner: the same inputs give the same listing on every runner.
(cd "$stage" && find "$name" -print | LC_ALL=C sort > "$stage/files")
rm -f "$out/$archive"
if [ -n "$windows" ]; then
  command -v zip > /dev/null 2>&1 || { echo "package.sh: zip is not installed" >&2; exit 1; }
  # -X: no Unix owners or extra times; -D: no directory entries; names from the list.
  (cd "$stage" && zip -X -D -q -9 "$out/$archive" -@ < "$stage/files")
else
  (cd "$stage" && tar -cf - --no-recursion -T "$stage/files" | gzip -9 > "$out/$archive")
fi

if command -v sha256sum > /dev/null 2>&1; then
  (cd "$out" && sha256sum "$archive" > "$archive.sha256")
else
  (cd "$out" && shasum -a 256 "$archive" > "$archive.sha256")
fi
echo "$out/$archive"
