;; Inner products of float32 rows by f32x4 SIMD (f32-dots.ts), each summed in four lanes and the
;; lanes added at the end; rows are `dim` floats each (dim a multiple of 4).
;;   dots     one query at `q` against n rows at `x`: out[i] (f32) = <q, row i> (the chance
;;            floor's sample: core/ranking/chance-floor.ts);
;;   nearest  n rows at `x` against k centres at `c`: out[i] (i32) = the centre with the largest
;;            inner product, the first of equals (the narratives' micro-clusters:
;;            core/clustering/stories.ts).
;; Built into f32-dots.wasm by `npm run wasm` (tools/build-wasm.ts); a test holds the two equal.
(module
  (memory (export "memory") 1)
  (func (export "dots") (param $q i32) (param $x i32) (param $n i32) (param $dim i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $bytes i32) (local $acc v128)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $row (i32.add (local.get $x) (i32.mul (local.get $i) (local.get $bytes))))
        (local.set $acc (v128.const f32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $done
          (loop $step
            (br_if $done (i32.ge_u (local.get $j) (local.get $bytes)))
            (local.set $acc
              (f32x4.add
                (local.get $acc)
                (f32x4.mul
                  (v128.load (i32.add (local.get $q) (local.get $j)))
                  (v128.load (i32.add (local.get $row) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $step)))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
            (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))
  (func $dot (param $a i32) (param $b i32) (param $bytes i32) (result f32)
    (local $j i32) (local $acc v128)
    (local.set $acc (v128.const f32x4 0 0 0 0))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $j) (local.get $bytes)))
        (local.set $acc
          (f32x4.add
            (local.get $acc)
            (f32x4.mul
              (v128.load (i32.add (local.get $a) (local.get $j)))
              (v128.load (i32.add (local.get $b) (local.get $j))))))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $step)))
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
      (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
  (func (export "nearest") (param $c i32) (param $k i32) (param $x i32) (param $n i32) (param $dim i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $bytes i32) (local $s f32) (local $best f32) (local $at i32)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (block $rows_done
      (loop $rows
        (br_if $rows_done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $row (i32.add (local.get $x) (i32.mul (local.get $i) (local.get $bytes))))
        (local.set $best (f32.const -inf))
        (local.set $at (i32.const 0))
        (local.set $j (i32.const 0))
        (block $centres_done
          (loop $centres
            (br_if $centres_done (i32.ge_u (local.get $j) (local.get $k)))
            (local.set $s
              (call $dot (local.get $row) (i32.add (local.get $c) (i32.mul (local.get $j) (local.get $bytes))) (local.get $bytes)))
            (if (f32.gt (local.get $s) (local.get $best))
              (then (local.set $best (local.get $s)) (local.set $at (local.get $j))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $centres)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (local.get $at))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))))
