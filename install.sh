#!/bin/sh
# Installs the `zidane` binary from a GitHub release, no Rust toolchain needed:
#
#   curl -fsSL https://github.com/zidane-rs/zidane/releases/latest/download/install.sh | sh
#
# It picks the archive for this machine, checks it against the release's SHA-256, and
# puts `zidane` and `zidane-worker` (the worker behind a Restate server,
# docs/DURABLE.md) in ~/.local/bin, zidane's man pages and shell completions under
# ~/.local/share. Settings (environment):
#
#   ZIDANE_VERSION       a release such as 0.1.0 (default: the latest)
#   ZIDANE_INSTALL_DIR   where the binary goes (default: ~/.local/bin)
#   ZIDANE_DATA_DIR      where man pages and completions go (default: $XDG_DATA_HOME,
#                        else ~/.local/share)
#   ZIDANE_ARTIFACT      a local zidane-<target>.tar.gz to install instead of a
#                        download; its checksum is read from <artifact>.sha256
#   ZIDANE_REPO          the GitHub repository (default: zidane-rs/zidane)
set -eu

repo="${ZIDANE_REPO:-zidane-rs/zidane}"
version="${ZIDANE_VERSION:-latest}"
install_dir="${ZIDANE_INSTALL_DIR:-$HOME/.local/bin}"
data_dir="${ZIDANE_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}}"
artifact="${ZIDANE_ARTIFACT:-}"

say() { echo "zidane install: $*" >&2; }
fail() { say "$*"; exit 1; }

target() {
  os=$(uname -s)
  arch=$(uname -m)
  case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) fail "no release build for the $arch processor; build from source: cargo install zidane-cli" ;;
  esac
  case "$os" in
    Linux) echo "$arch-unknown-linux-musl" ;;
    Darwin) echo "$arch-apple-darwin" ;;
    *) fail "no release build for $os; this installer serves Linux and macOS (on Windows, in PowerShell: irm https://github.com/$repo/releases/latest/download/install.ps1 | iex)" ;;
  esac
}

download() {
  if command -v curl > /dev/null 2>&1; then
    curl --proto '=https' --tlsv1.2 -fsSL "$1" -o "$2"
  elif command -v wget > /dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "neither curl nor wget is installed"
  fi
}

sha256() {
  if command -v sha256sum > /dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum > /dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "neither sha256sum nor shasum is installed: cannot check the download"
  fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

if [ -n "$artifact" ]; then
  [ -f "$artifact" ] || fail "no artifact at $artifact"
  [ -f "$artifact.sha256" ] || fail "no checksum at $artifact.sha256"
  archive="$artifact"
  sums="$artifact.sha256"
else
  name="zidane-$(target).tar.gz"
  if [ "$version" = latest ]; then
    base="https://github.com/$repo/releases/latest/download"
  else
    base="https://github.com/$repo/releases/download/v${version#v}"
  fi
  say "downloading $base/$name"
  archive="$work/$name"
  sums="$work/$name.sha256"
  download "$base/$name" "$archive" || fail "cannot download $base/$name"
  download "$base/$name.sha256" "$sums" || fail "cannot download $base/$name.sha256"
fi

expected=$(cut -d ' ' -f 1 < "$sums")
actual=$(sha256 "$archive")
if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
  fail "checksum mismatch for $archive: expected $expected, got $actual; nothing installed"
fi

mkdir -p "$work/unpacked"
tar -xzf "$archive" -C "$work/unpacked"
dir=$(find "$work/unpacked" -mindepth 1 -maxdepth 1 -type d -name 'zidane-*' | head -n 1)
for binary in zidane zidane-worker; do
  if [ -z "$dir" ] || [ ! -f "$dir/$binary" ]; then
    fail "$archive holds no zidane-<target>/$binary; nothing installed"
  fi
done

# Into a temporary name first, then renamed: a running zidane (or worker) keeps its old
# file.
install_binary() {
  cp "$dir/$1" "$install_dir/.$1.new"
  chmod 755 "$install_dir/.$1.new"
  mv -f "$install_dir/.$1.new" "$install_dir/$1"
}

mkdir -p "$install_dir"
install_binary zidane
install_binary zidane-worker

if [ -d "$dir/man/man1" ]; then
  mkdir -p "$data_dir/man/man1"
  cp "$dir"/man/man1/*.1 "$data_dir/man/man1/"
fi
if [ -d "$dir/completions" ]; then
  mkdir -p "$data_dir/bash-completion/completions" "$data_dir/zsh/site-functions" \
    "$data_dir/fish/vendor_completions.d"
  cp "$dir/completions/zidane.bash" "$data_dir/bash-completion/completions/zidane"
  cp "$dir/completions/_zidane" "$data_dir/zsh/site-functions/_zidane"
  cp "$dir/completions/zidane.fish" "$data_dir/fish/vendor_completions.d/zidane.fish"
fi

say "installed $("$install_dir/zidane" --version) to $install_dir/zidane"
say "installed $("$install_dir/zidane-worker" --version) to $install_dir/zidane-worker"
case ":$PATH:" in
  *":$install_dir:"*) ;;
  *) say "$install_dir is not on your PATH; add it, e.g.: export PATH=\"$install_dir:\$PATH\"" ;;
esac
