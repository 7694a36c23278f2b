#!/usr/bin/env bash
# Makes a generic RISC-V GCC (Debian's gcc-riscv64-unknown-elf) answer to the names ESP-IDF's
# toolchain-esp32c3.cmake calls (riscv32-esp-elf-gcc, -g++, -ar, -objcopy, ...), so that
# `idf.py` can configure and build an ESP32-C3 project without Espressif's toolchain:
#
#   scripts/esp_idf_gnu_riscv.sh DIR        # writes the wrappers into DIR
#   export PATH=DIR:$PATH                   # then idf.py finds them
#
# MCPGEN_RISCV_PREFIX (default riscv64-unknown-elf-) names the compiler the wrappers call. The
# compiler and driver wrappers add -mabi=ilp32 and -march=rv32imc_zicsr_zifencei before the
# caller's options (riscv32-esp-elf-gcc's defaults; a riscv64 GCC defaults to rv64/lp64). A link (no -c, -S or -E) gets -march=rv32imc instead of ESP-IDF's
# rv32imc_zicsr_zifencei: a generic multilib GCC selects its rv32 libraries (libgcc, the C
# library) by that name, and the Z extensions only matter to the assembler, which a link does
# not run. A link without a -specs option gets -specs=$MCPGEN_RISCV_SPECS (default
# picolibc.specs when the compiler has it: Debian packages picolibc, not newlib, for RISC-V),
# so that CMake's first test link finds a C library; ESP-IDF's own link with
# CONFIG_LIBC_PICOLIBC passes the same specs itself (docs/firmware.md, "Building with a
# Debian toolchain").
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
prefix=${MCPGEN_RISCV_PREFIX:-riscv64-unknown-elf-}
command -v "${prefix}gcc" >/dev/null || {
    echo "error: ${prefix}gcc not found (apt-get install gcc-riscv64-unknown-elf, or set MCPGEN_RISCV_PREFIX)" >&2
    exit 2
}
libdir=
specs=${MCPGEN_RISCV_SPECS-}
if [ -z "${MCPGEN_RISCV_SPECS+set}" ] && [ "$("${prefix}gcc" -print-file-name=picolibc.specs)" != picolibc.specs ]; then
    specs=picolibc.specs
fi
mkdir -p "$dir"
# The C++ runtime shim (scripts/esp_idf_gnu_riscv/cxx_runtime.cpp) when the compiler has none.
here=$(cd "$(dirname "$0")" && pwd)
if [ "$("${prefix}g++" -march=rv32imc -mabi=ilp32 -print-file-name=libstdc++.a)" = libstdc++.a ]; then
    mkdir -p "$dir/lib"
    "${prefix}g++" -march=rv32imc_zicsr_zifencei -mabi=ilp32 -Os -std=gnu++17 -fno-exceptions -fno-rtti \
        -Wall -Wextra -Werror -c "$here/esp_idf_gnu_riscv/cxx_runtime.cpp" -o "$dir/lib/cxx_runtime.o"
    rm -f "$dir/lib/libstdc++.a" "$dir/lib/libsupc++.a"
    "${prefix}ar" rcs "$dir/lib/libstdc++.a" "$dir/lib/cxx_runtime.o"
    "${prefix}ar" rcs "$dir/lib/libsupc++.a"
    libdir="$dir/lib"
fi

for tool in gcc g++ c++ cpp; do
    cat > "$dir/riscv32-esp-elf-$tool" <<EOF
#!/usr/bin/env bash
# Written by mcpgen scripts/esp_idf_gnu_riscv.sh: ${prefix}$tool as riscv32-esp-elf-$tool.
link=1 specs="$specs"
for a in "\$@"; do case "\$a" in -c|-S|-E|-M|-MM|--version|-dumpversion|-dumpmachine|-print-*) link=0;; -specs=*|--specs=*) specs=;; esac; done
# riscv32-esp-elf-gcc's default -march when none is given (the linker scripts are preprocessed
# without one); a -march given later wins.
if [ \$link = 1 ]; then args=(-march=rv32imc); else args=(-march=rv32imc_zicsr_zifencei); fi
for a in "\$@"; do
    if [ \$link = 1 ] && [ "\${a%%_*}" != "\$a" ] && [ "\${a#-march=rv32}" != "\$a" ]; then a=\${a%%_*}; fi
    args+=("\$a")
done
if [ \$link = 1 ] && [ -n "\$specs" ]; then args+=("-specs=\$specs"); fi
if [ \$link = 1 ] && [ -n "$libdir" ]; then args+=("-L$libdir"); fi
# MCPGEN_RISCV_CFLAGS: options of the chain for every call (e.g. -isystem DIR for headers the
# C library lacks), read when the wrapper runs.
# shellcheck disable=SC2086
exec ${prefix}$tool -mabi=ilp32 \${MCPGEN_RISCV_CFLAGS-} "\${args[@]}"
EOF
    chmod +x "$dir/riscv32-esp-elf-$tool"
done
for tool in ar as ld nm objcopy objdump ranlib readelf size strip addr2line gdb gcc-ar gcc-nm gcc-ranlib elfedit; do
    if command -v "${prefix}$tool" >/dev/null; then
        printf '#!/bin/sh\n# Written by mcpgen scripts/esp_idf_gnu_riscv.sh\nexec %s%s "$@"\n' "$prefix" "$tool" \
            > "$dir/riscv32-esp-elf-$tool"
        chmod +x "$dir/riscv32-esp-elf-$tool"
    fi
done
echo "riscv32-esp-elf-* in $dir call ${prefix}* ($("${prefix}gcc" -dumpversion)); export PATH=$dir:\$PATH"
