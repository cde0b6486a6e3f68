# shellcheck shell=bash
# Sourced by scripts that build a Go program through the Go module proxy.
# Without Go on PATH: Go's own toolchain, which the Go module proxy serves as the module
# golang.org/toolchain (the proxy is reachable where GitHub is not), unpacked under .venv.
go_toolchain=1.25.14
fetch_go() {
  local arch zip dir
  case "$(uname -m)" in
    x86_64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) return 1 ;;
  esac
  dir="${ROOT:-$PWD}/.venv/go-toolchain"
  if [ ! -x "$dir/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch/bin/go" ]; then
    echo "setup: no Go on PATH: fetching Go $go_toolchain from the Go module proxy" >&2
    zip="$(mktemp)"
    curl -fsSL -o "$zip" "${GOPROXY_URL:-https://proxy.golang.org}/golang.org/toolchain/@v/v0.0.1-go$go_toolchain.linux-$arch.zip" || {
      rm -f "$zip"
      return 1
    }
    rm -rf "$dir" && mkdir -p "$dir"
    python3 -m zipfile -e "$zip" "$dir" && rm -f "$zip"
    chmod +x "$dir/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch/bin/"* \
      "$dir/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch/pkg/tool/"*/* 2>/dev/null || true
  fi
  echo "$dir/golang.org/toolchain@v0.0.1-go$go_toolchain.linux-$arch/bin/go"
}

