//! Element types: the 13 types, how literals get theirs, `as` conversions, `f16`/`bf16`
//! arithmetic, and the atomics each type has.
//!
//! # The element types
//!
//! Every scalar, tile element, shared tensor and global tensor has one of these types. A kernel
//! parameter `GlobalTensor<T>` is launched with a [`GlobalTensor<T>`](crate::GlobalTensor) of
//! the same `T` (anything else does not compile), and a scalar parameter `T` with a `T`.
//!
//! | type | bytes | host type | arithmetic |
//! |---|:-:|---|---|
//! | `bool` | 1 | `bool` | logical `& \| ^ !`, `&&`, `\|\|`, `==`, `!=`; reductions `.any()`, `.all()` |
//! | `i8` `u8` | 1 | `i8` `u8` | integer: wrapping `+ - *`, `/ %` truncating, bitwise, shifts, comparisons, `min`/`max`/`abs` |
//! | `i16` `u16` | 2 | `i16` `u16` | integer |
//! | `i32` `u32` | 4 | `i32` `u32` | integer |
//! | `i64` `u64` | 8 | `i64` `u64` | integer |
//! | `f16` | 2 | [`tilus::f16`](crate::f16) (the `half` crate's) | float, computed in `f32` (see [below](#f16-and-bf16)) |
//! | `bf16` | 2 | [`tilus::bf16`](crate::bf16) | float, computed in `f32` |
//! | `f32` | 4 | `f32` | float: IEEE `+ - * / %`, comparisons, `min`/`max` (NaN ignored), `abs`, `sqrt`, `floor` .. `round_ties_even`, `mul_add`, `exp`, `ln` |
//! | `f64` | 8 | `f64` | float |
//!
//! Float arithmetic is IEEE 754 with round-to-nearest-even and no flush to zero, on the GPU and
//! on the emulator alike; a NaN result is the canonical NaN (`0x7fff_ffff` for `f32`), as the
//! GPU produces it. `bool` in memory is one byte, 0 or 1.
//!
//! Loads and stores of contiguous elements are vectorised to 16-byte accesses where the layout
//! allows: 16 × `u8`, 8 × `bf16`, 4 × `f32` per instruction.
//!
//! # Literals and context
//!
//! As in Rust, a literal with a suffix has that type (`1u8`, `7u64`, `2.5f64`, `1e-3f32`), and
//! an unsuffixed literal has the type its context needs: the other operand of a binary operator,
//! the tensor a value is stored into, the element type of an atomic's destination, a scalar
//! parameter it is compared with. Without any context an integer literal is an `i32` and a
//! float literal an `f64`, as rustc's defaults. The same holds for expressions built only from
//! literals and for the context-typed builtins: [`block_idx`](super::block_idx),
//! [`grid_dim`](super::grid_dim), [`arange`](super::arange) (integers) and
//! [`zeros`](super::zeros), [`ones`](super::ones) (any number type); a `let` bound to one of
//! them is typed at each use.
//!
//! A `let mut` initialised with a literal (or `zeros`/`ones`/`full` of one) keeps its type open
//! until its first *typed* use decides it: `let mut acc = 0.0; acc += t.sum();` with an `f32`
//! tile `t` makes `acc` an `f32`. Precisely:
//!
//! * every use is considered, wherever it stands (after the variable is assigned in a branch
//!   or a loop, on either side of an operator): the first one in source order that *needs* one
//!   type gives it. Such a use is an operand of a binary operator, of `min`/`max`/`select` or
//!   of `fma` whose other operand is typed (with `n: i64`, both `r < n` and `n > r` make `r`
//!   an `i64`), a value stored or an atomic's operand (the tensor's element type), an
//!   assignment of a typed value to it or of it to a typed variable, a `for` bound whose
//!   other bound is typed;
//! * uses that accept any type decide nothing: assigning it another literal or updating it
//!   with one (`count += 1`), an offset, an index, a view's offset or dims, a shift amount;
//! * where no use decides, an integer literal makes an `i32` and a float one an `f64`;
//! * a type flows from a use to the variable, not further: `let s = r;` gives `s` the type
//!   `r` ends up with, but a use of `s` does not decide `r`.
//!
//! Where two types meet, the help widens the narrower side (`(limit as i64) < n`), and never
//! suggests a conversion that may lose values when one that does not exists.
//!
//! A literal that does not fit its type (`300` as a `u8`), an integer literal where a float is
//! needed (`x * 2` with `x: f32`) or a float literal where an integer is needed are compile
//! errors; the help says what to write (`2.0`, or an `as`).
//!
//! Typed constants: `T::MIN`, `T::MAX` of the numeric types (`u8::MAX`, `f32::MAX`), `T::BITS`
//! of the integers (a `u32`), and `f32::INFINITY`, `NEG_INFINITY`, `NAN`, `EPSILON`,
//! `MIN_POSITIVE` of every float type.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 32)]
//! fn literals(x: GlobalTensor<u8>, y: GlobalTensor<u8>, f: GlobalTensor<f64>, top: GlobalTensor<u64>) {
//!     let t = load_global(x, offsets = [0], shape = [16]);
//!     store_global(y, t * 2 + 1, offsets = [0]); // 2 and 1 are u8: wrapping u8 arithmetic
//!     let c = 0.1; // no context anywhere: f64
//!     store_global(f, (t as f64) + c, offsets = [0]);
//!     let mut big = 1; // open until its first use: a u64 below
//!     big += u64::MAX - 1;
//!     store_global(top, full([1], big), offsets = [0]);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let data: Vec<u8> = (0..16).map(|i| (i * 17) as u8).collect();
//!     let x = dev.upload(&data)?;
//!     let (y, f, top) = (dev.zeros::<u8>(16)?, dev.zeros::<f64>(16)?, dev.zeros::<u64>(1)?);
//!     literals::launch(&dev, 1, &x, &y, &f, &top)?;
//!     assert_eq!(y.download()?, data.iter().map(|v| v.wrapping_mul(2).wrapping_add(1)).collect::<Vec<_>>());
//!     assert_eq!(f.download()?, data.iter().map(|&v| v as f64 + 0.1).collect::<Vec<_>>());
//!     assert_eq!(top.download()?, vec![u64::MAX]);
//!     Ok(())
//! }
//! ```
//!
//! # No implicit mixing
//!
//! Nothing converts implicitly: the operands of an operator, the arms of a `select`, a stored
//! value and its tensor, an atomic's operand and its destination all have one type. Mixing two
//! is a compile error at the operator that says which `as` to write:
//!
//! ```compile_fail
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 32)]
//! fn k(x: GlobalTensor<f32>, n: GlobalTensor<i32>) {
//!     let t = load_global(x, offsets = [0], shape = [32]);
//!     let c = load_global(n, offsets = [0], shape = [32]);
//!     // error: mismatched types for `*`: an `f32` tile and an `i32` tile (help: `(..) as f32`)
//!     store_global(x, t * c, offsets = [0]);
//! }
//! # fn main() {}
//! ```
//!
//! Indices, offsets, loop bounds and view dims are the exception that is not one: they may be
//! of any integer type, each on its own (`offsets = [row, col]` with `row: i64`, `col: u32`),
//! because they are addresses rather than arithmetic. `x.len()` and `x.dim(axis)` are `i64`.
//!
//! # Conversions with `as`
//!
//! `x as T` converts a scalar or every element of a tile, between any two element types, with
//! the meaning of Rust's `as`:
//!
//! | from → to | result |
//! |---|---|
//! | integer → wider integer | sign- or zero-extended by the source's signedness |
//! | integer → narrower or same-width integer | the low bits (wraps) |
//! | integer → float | rounded to nearest even |
//! | float → integer | truncated toward zero and saturated to the type's range; NaN gives 0 |
//! | float → float | rounded to nearest even; `f64 → f16` rounds once, `f64 → bf16` goes through `f32` (two roundings, as the PTX does) |
//! | `bool` → number | `true` is 1, `false` is 0 |
//! | number → `bool` | `x != 0` (so NaN is `true`, `-0.0` is `false`) |
//!
//! To reinterpret bits instead, use [`x.to_bits()`](super::Tile::to_bits) and
//! [`f32::from_bits`](super::from_bits).
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 32)]
//! fn convert(x: GlobalTensor<f32>, i: GlobalTensor<i8>, u: GlobalTensor<u16>,
//!            h: GlobalTensor<f16>, b: GlobalTensor<bool>, w: GlobalTensor<u8>) {
//!     let t = load_global(x, offsets = [0], shape = [8]);
//!     store_global(i, t as i8, offsets = [0]);
//!     store_global(u, t as u16, offsets = [0]);
//!     store_global(h, t as f16, offsets = [0]);
//!     store_global(b, t as bool, offsets = [0]);
//!     store_global(w, (t as i32) as u8, offsets = [0]); // integer to integer wraps
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let data = [1.9f32, -1.9, 300.7, -300.0, f32::NAN, f32::INFINITY, 65520.0, -0.0];
//!     let x = dev.upload(&data)?;
//!     let (i, u) = (dev.zeros::<i8>(8)?, dev.zeros::<u16>(8)?);
//!     let (h, b, w) = (dev.zeros::<f16>(8)?, dev.zeros::<bool>(8)?, dev.zeros::<u8>(8)?);
//!     convert::launch(&dev, 1, &x, &i, &u, &h, &b, &w)?;
//!     // Exactly Rust's `as`: saturating, NaN to 0, and 65520 rounds to f16 infinity.
//!     assert_eq!(i.download()?, data.iter().map(|&v| v as i8).collect::<Vec<_>>());
//!     assert_eq!(u.download()?, data.iter().map(|&v| v as u16).collect::<Vec<_>>());
//!     // NaN becomes the canonical NaN, 0x7fff (an H100 gives it for the f32 canonical NaN).
//!     let f16_bits = |v: f32| if v.is_nan() { 0x7fff } else { f16::from_f32(v).to_bits() };
//!     assert_eq!(h.download()?.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
//!                data.iter().map(|&v| f16_bits(v)).collect::<Vec<_>>());
//!     assert_eq!(b.download()?, data.iter().map(|&v| v != 0.0).collect::<Vec<_>>());
//!     assert_eq!(w.download()?, data.iter().map(|&v| v as i32 as u8).collect::<Vec<_>>());
//!     Ok(())
//! }
//! ```
//!
//! # f16 and bf16
//!
//! `f16` and `bf16` live in memory and registers as 16 bits, and every operation on them is
//! computed in `f32` and rounded back to the type after the operation: `+ - * / %`, `min`,
//! `max`, `abs`, `sqrt`, `mul_add`/`fma` (the fused `f32` result rounded once), `floor` ..
//! `round_ties_even`, `exp`, `ln`. For `+ - * /` and `sqrt` this is the correctly rounded
//! result (an `f32` has more than twice the precision of either type plus two bits, so the
//! double rounding cannot change it), the same as the native half-precision instructions give.
//! Comparisons are exact. `t.sum()` adds in `f32` and rounds once at the end. Conversions to
//! and from `f16`/`bf16` go through `f32`, except `f64 → f16`, which rounds once (`cvt.rn.f16.f64`).
//! Float literals of `f16`/`bf16` are rounded once from their decimal value.
//!
//! Atomic `add` on `f16`/`bf16` is the hardware's (`atom.add.noftz.f16`, `.bf16` from sm_90);
//! `min`, `max` and `exch` are `cas.b16` loops (the table below), and `cas` is the hardware's.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 32)]
//! fn thirds(x: GlobalTensor<bf16>, y: GlobalTensor<bf16>, s: GlobalTensor<f32>) {
//!     let t = load_global(x, offsets = [0], shape = [32]);
//!     store_global(y, t * 3.0 / 3.0, offsets = [0]); // rounded to bf16 after `*` and after `/`
//!     store_global(s, full([1], t.sum() as f32), offsets = [0]);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let data: Vec<bf16> = (0..32).map(|i| bf16::from_f32(1.0 + i as f32 / 7.0)).collect();
//!     let (x, y, s) = (dev.upload(&data)?, dev.zeros::<bf16>(32)?, dev.zeros::<f32>(1)?);
//!     thirds::launch(&dev, 1, &x, &y, &s)?;
//!     let r = |v: f32| bf16::from_f32(v).to_f32();
//!     let want: Vec<bf16> = data.iter().map(|v| bf16::from_f32(r(v.to_f32() * 3.0) / 3.0)).collect();
//!     assert_eq!(y.download()?, want);
//!     // The f32 sum is rounded to bf16 once; its order is fixed, its value within an ulp of this.
//!     let exact: f32 = data.iter().map(|v| v.to_f32()).sum();
//!     assert!((s.download()?[0] - r(exact)).abs() <= 0.25);
//!     Ok(())
//! }
//! ```
//!
//! # Atomics per element type
//!
//! Which read-modify-writes PTX can perform on each type, as the compiler's legality table
//! (`tilus::core::table::RMW_ROWS`) has them (a unit test keeps this table equal to it). `✓`:
//! any target; `sm_90`: from sm_90 (the kernel's target is raised to it, an explicit older
//! `target` is a compile error); `bits`: float `min`/`max` performed on the bit patterns, which
//! orders values by IEEE `totalOrder` (exact; `-0.0 < +0.0`; a positive NaN is the largest
//! value and a negative NaN the smallest, unlike the element-wise `min`/`max`, which ignore NaN);
//! `loop`: no PTX instruction has it (PTX's only 16-bit atomics are `cas.b16` and the float
//! adds), so each element is an `atom.cas.b16` loop: as atomic as one instruction, any target,
//! slower under contention (every conflicting update retries; float `min`/`max` in the same
//! `totalOrder`); `·`: not available (a compile error whose help says what to use instead).
//!
//! <!-- atomics-table:begin -->
//! | type | add | sub | min | max | exch | cas | and | or | xor | inc | dec |
//! |---|:-:|:-:|:-:|:-:|:-:|:-:|:-:|:-:|:-:|:-:|:-:|
//! | `bool` | · | · | · | · | · | · | · | · | · | · | · |
//! | `i8` | · | · | · | · | · | · | · | · | · | · | · |
//! | `u8` | · | · | · | · | · | · | · | · | · | · | · |
//! | `i16` | loop | loop | loop | loop | loop | ✓ | loop | loop | loop | · | · |
//! | `u16` | loop | loop | loop | loop | loop | ✓ | loop | loop | loop | · | · |
//! | `i32` | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | · | · |
//! | `u32` | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ |
//! | `i64` | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | · | · |
//! | `u64` | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | · | · |
//! | `f16` | ✓ | ✓ | loop | loop | loop | ✓ | · | · | · | · | · |
//! | `bf16` | sm_90 | sm_90 | loop | loop | loop | ✓ | · | · | · | · | · |
//! | `f32` | ✓ | ✓ | bits | bits | ✓ | ✓ | · | · | · | · | · |
//! | `f64` | ✓ | ✓ | bits | bits | ✓ | ✓ | · | · | · | · | · |
//! <!-- atomics-table:end -->
//!
//! The table holds for every form: the tilus element-wise forms
//! ([`atomic::global_add`](super::atomic::global_add), ...), the indexed forms
//! ([`atomic_add`](super::atomic_add), ..., where `exch` is spelled `xchg`), and, for `add`,
//! `sub`, `min` and `max` only, the tilus scatter forms
//! ([`atomic::shared_scatter_add`](super::atomic::shared_scatter_add), ...): a scatter's
//! repeated indices make the result of the others depend on timing. `atomic_load` and
//! `atomic_store` take every type.
//!
//! Details per op: integer `add`/`sub` wrap, `min`/`max` compare by signedness; float `add`
//! rounds to nearest even, and `f32` `add` on *global* memory flushes subnormal inputs and
//! results to zero, as `atom.global.add.f32` does (shared memory, `f64`, `f16` and `bf16` keep
//! them); `inc`/`dec` take the bound as their operand; `cas` compares bit patterns.
//!
//! Instructions on several elements, chosen by the compiler where a thread's run of the tile
//! holds adjacent elements and, at run time, they are all active, consecutive in memory and
//! aligned (elsewhere the scalar form runs; each element stays its own atomic): vector forms on
//! global memory from sm_90 (`red.global.add.v4.f32`, `.v8.f16`, `.v8.bf16`), and packed ones
//! on two 16-bit floats in one 32-bit word where no vector form applies (`add.noftz.f16x2` on
//! shared memory and on global memory below sm_90, `.bf16x2` on shared memory). Pairs of 64-bit
//! elements have 128-bit `exch` and `cas` from sm_90, asked for by name:
//! [`atomic::global_cas128`](super::atomic::global_cas128) and its three siblings, and the
//! indexed [`atomic_cas128`](super::atomic_cas128) and [`atomic_xchg128`](super::atomic_xchg128).
//!
//! ```compile_fail
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 32)]
//! fn k(x: GlobalTensor<f16>) {
//!     // error: atomic `or` is not supported on `f16` elements (help: bitwise atomics take
//!     // integer types: use an integer tensor of the same width (`u16`, `u32` or `u64`))
//!     atomic::global_or(x, ones([32]));
//! }
//! # fn main() {}
//! ```
