/* Reset and trap entry of the RV32 port (qemu-system-riscv32 -M virt -bios none), and
 * the semihosting call. Everything that needs a CSR instruction is here: this file is
 * assembled with -march=rv32imc_zicsr while the C++ is compiled for plain rv32imc,
 * because adding _zicsr to the C++ flags makes gcc pick the 64-bit libraries (there is
 * no rv32imc_zicsr multilib).
 *
 * QEMU starts hart 0 in M-mode at the beginning of RAM (0x80000000) with -bios none, so
 * _start must be the first thing in the image (.text.start, first in the linker script).
 */

#define STACK_GUARD_SIZE 64          /* must match .stack_guard in riscv_virt.ld */
#define PMP_NAPOT_LOCKED_NO_ACCESS 0x98  /* pmpcfg: L=1, A=NAPOT, R=W=X=0 */
#define MIE_MEIE 0x800               /* machine external interrupt enable */

  .section .text.start, "ax", @progbits
  .globl _start
_start:
  /* gp must be loaded without relaxation, which would make it relative to itself. */
  .option push
  .option norelax
  la gp, __global_pointer$
  .option pop
  la tp, __tls_base__                /* picolibc keeps errno in thread-local storage */
  la sp, __stack_top__
  la t0, mcpgen_trap_entry
  csrw mtvec, t0

  /* Stack guard: a locked PMP region with no permissions right below the stack. Locked
   * entries bind M-mode too, so a stack overflow faults (mcause 7) instead of silently
   * running into the code below RAM. NAPOT encoding: base/4 with (size/8 - 1) low bits. */
  la t0, __stack_guard__
  srli t0, t0, 2
  ori t0, t0, (STACK_GUARD_SIZE / 8 - 1)
  csrw pmpaddr0, t0
  li t0, PMP_NAPOT_LOCKED_NO_ACCESS
  csrw pmpcfg0, t0

  /* Let the PLIC's external interrupt wake `wfi`. mstatus.MIE stays 0: no interrupt is
   * ever taken, the UART is read by polling after the wake-up. */
  li t0, MIE_MEIE
  csrs mie, t0

  call mcpgen_reset
1:
  wfi
  j 1b

/* Every trap is fatal (no interrupt is enabled in mstatus): report it on a fresh stack
 * (the old one may be what overflowed) and halt. */
  .section .text.trap, "ax", @progbits
  .balign 4
  .globl mcpgen_trap_entry
mcpgen_trap_entry:
  la sp, __stack_top__
  csrr a0, mcause
  csrr a1, mepc
  csrr a2, mtval
  call mcpgen_trap
1:
  wfi
  j 1b

/* long mcpgen_semihost(long op, const void* arg): the RISC-V semihosting call, an
 * ebreak between two marker instructions. They must be uncompressed and on one page,
 * hence norvc and the 16-byte alignment. */
  .section .text.semihost, "ax", @progbits
  .balign 16
  .globl mcpgen_semihost
mcpgen_semihost:
  .option push
  .option norvc
  slli zero, zero, 0x1f
  ebreak
  srai zero, zero, 7
  .option pop
  ret
