/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entry of the test guest: a Multiboot (version 1) header, so that QEMU's
 * -kernel loads this ELF directly, and the jump to C with a stack of our
 * own. The loader leaves us in 32-bit protected mode with flat segments,
 * paging off and interrupts off, with its magic in %eax and the address of
 * the Multiboot information (the command line among it) in %ebx: both go
 * to guest_main(magic, info).
 */
#define MB_MAGIC	0x1badb002
#define MB_FLAGS	0x00000003	/* align modules; give us a memory map */

	.section .multiboot, "a"
	.align 4
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

	.text
	.globl _start
_start:
	cli
	movl	$stack_top, %esp
	pushl	%ebx
	pushl	%eax
	call	guest_main
1:	hlt
	jmp	1b

	.bss
	.align 16
	.skip 16384
stack_top:

	.section .note.GNU-stack, "", @progbits
