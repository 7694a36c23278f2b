#!/usr/bin/env bash
# Builds Espressif's newlib (espressif/newlib-esp32, branch esp-4.3.0) for the ESP32-C3
# (rv32imc, ilp32) with the riscv32-esp-elf-* wrappers of scripts/esp_idf_gnu_riscv.sh, so that
# ESP-IDF 5.5 builds in its default C library mode (newlib) with Debian's RISC-V GCC, which has
# no newlib of its own:
#
#   MCPGEN_RISCV_SPECS= scripts/esp_idf_gnu_riscv.sh DIR && export PATH=DIR:$PATH
#   scripts/esp_idf_newlib.sh NEWLIB_SRC PREFIX     # installs PREFIX/riscv32-esp-elf/{include,lib}
#
# The configure options are those of Espressif's riscv32-esp-elf toolchain as far as ESP-IDF
# relies on them: its own system calls (none supplied by newlib), retargetable locks, C99 and
# long long formats. NEWLIB_SRC is the source tree (configure at its top). A tree whose
# newlib/Makefile.in is missing (a snapshot without its largest file) gets it regenerated with
# the installed automake/autoconf (apt-get install automake autoconf); their object names differ
# from the release's, which the script corrects in the generated Makefile.
# Afterwards (docs/firmware.md, "Building with a Debian toolchain"): C_INCLUDE_PATH names
# PREFIX/riscv32-esp-elf/include and MCPGEN_RISCV_CFLAGS has -LPREFIX/riscv32-esp-elf/lib.
set -euo pipefail
src=${1:?usage: $0 NEWLIB_SRC PREFIX}
prefix=${2:?usage: $0 NEWLIB_SRC PREFIX}
src=$(cd "$src" && pwd)
mkdir -p "$prefix" && prefix=$(cd "$prefix" && pwd)
command -v riscv32-esp-elf-gcc >/dev/null || {
    echo "error: riscv32-esp-elf-gcc not on PATH (MCPGEN_RISCV_SPECS= scripts/esp_idf_gnu_riscv.sh DIR, then PATH=DIR:\$PATH)" >&2
    exit 2
}
[ -x "$src/configure" ] && [ -d "$src/newlib/libc" ] || {
    echo "error: $src is not a newlib source tree (no configure, newlib/libc)" >&2
    exit 2
}
regenerated=0
if [ ! -f "$src/newlib/Makefile.in" ]; then
    command -v automake >/dev/null && command -v autoconf >/dev/null || {
        echo "error: $src/newlib/Makefile.in is missing and automake/autoconf are not installed (apt-get install automake autoconf)" >&2
        exit 2
    }
    # newlib's config/override.m4 insists on autoconf 2.69; accept the installed one.
    have=$(autoconf --version | sed -n '1s/.* //p')
    sed -i "s/\[_GCC_AUTOCONF_VERSION\], \[[0-9.]*\]/[_GCC_AUTOCONF_VERSION], [$have]/" "$src/config/override.m4"
    (cd "$src/newlib" && aclocal -I .. -I ../config && autoconf && autoheader && automake --foreign)
    regenerated=1
fi
build=$prefix/build
mkdir -p "$build"
cd "$build"
"$src/configure" --target=riscv32-esp-elf --prefix="$prefix" --disable-multilib --disable-nls \
    --enable-newlib-io-long-long --enable-newlib-io-c99-formats --enable-newlib-register-fini \
    --enable-newlib-retargetable-locking --disable-newlib-supplied-syscalls --enable-newlib-multithread \
    CFLAGS_FOR_TARGET="-Os -g0 -ffunction-sections -fdata-sections" >configure.log
make configure-target-newlib >>configure.log
if [ $regenerated = 1 ]; then
    # libc.a takes a few objects out of libm.a by name; this automake names them a-NAME.o, the
    # release's libm_a-NAME.o.
    sed -i 's/\blibm_a-\([a-z0-9_]*\)\.o/a-\1.o/g' riscv32-esp-elf/newlib/Makefile
fi
make -j"${MCPGEN_JOBS:-2}" all-target-newlib >make.log
make install-target-newlib >install.log
inc=$prefix/riscv32-esp-elf/include lib=$prefix/riscv32-esp-elf/lib
# GCC's own stdatomic.h and tgmath.h come first in a toolchain built with newlib; on
# C_INCLUDE_PATH newlib's would (its atomic_init does not compile with GCC's _Atomic).
mkdir -p "$prefix/riscv32-esp-elf/shadowed"
for h in stdatomic.h tgmath.h; do
    [ ! -f "$inc/$h" ] || mv "$inc/$h" "$prefix/riscv32-esp-elf/shadowed/"
done
# The RISC-V GCC's link asks for libgloss; ESP-IDF supplies the system calls itself.
[ -f "$lib/libgloss.a" ] || riscv32-esp-elf-ar rcs "$lib/libgloss.a"
echo "newlib in $prefix/riscv32-esp-elf: export C_INCLUDE_PATH=$inc MCPGEN_RISCV_CFLAGS=-L$lib"
