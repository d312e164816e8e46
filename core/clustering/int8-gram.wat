;; Inner products of n int8 rows, all pairs: the Gram matrix of a search answer's rows
;; (int8-gram.ts). Rows are `dim` bytes each at `x` (dim a multiple of 16); the exact integer
;; products go to `out` as an n x n row-major i32 matrix, both halves. Each 16-byte step widens both
;; rows' codes to i16 and multiplies them with i32x4.dot_i16x8_s (eight products a lane pair, no
;; overflow: |code| <= 127, so a row's sum stays under 2^31 for any dim below 133,000).
;; Built into int8-gram.wasm by `npm run wasm` (tools/build-wasm.ts); a test holds the two equal.
(module
  (memory (export "memory") 1)
  (func $dot (param $pa i32) (param $pb i32) (param $dim i32) (result i32)
    (local $j i32) (local $acc v128) (local $va v128) (local $vb v128)
    (local.set $acc (v128.const i32x4 0 0 0 0))
    (local.set $j (i32.const 0))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $j) (local.get $dim)))
        (local.set $va (v128.load (i32.add (local.get $pa) (local.get $j))))
        (local.set $vb (v128.load (i32.add (local.get $pb) (local.get $j))))
        (local.set $acc
          (i32x4.add
            (local.get $acc)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $va)) (i16x8.extend_low_i8x16_s (local.get $vb)))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $va)) (i16x8.extend_high_i8x16_s (local.get $vb))))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $step)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
  (func (export "gram") (param $x i32) (param $n i32) (param $dim i32) (param $out i32)
    (local $a i32) (local $b i32) (local $s i32)
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $a) (local.get $n)))
        (local.set $b (local.get $a))
        (block $cols_done
          (loop $cols
            (br_if $cols_done (i32.ge_u (local.get $b) (local.get $n)))
            (local.set $s
              (call $dot
                (i32.add (local.get $x) (i32.mul (local.get $a) (local.get $dim)))
                (i32.add (local.get $x) (i32.mul (local.get $b) (local.get $dim)))
                (local.get $dim)))
            (i32.store
              (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $a) (local.get $n)) (local.get $b)) (i32.const 2)))
              (local.get $s))
            (i32.store
              (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $b) (local.get $n)) (local.get $a)) (i32.const 2)))
              (local.get $s))
            (local.set $b (i32.add (local.get $b) (i32.const 1)))
            (br $cols)))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (br $rows)))))
