;; One query's inner products with n float32 rows (f32-dots.ts): the chance floor's sample
;; (core/ranking/chance-floor.ts). The query is `dim` floats at `q`, the rows `dim` floats each at
;; `x` (dim a multiple of 4); out[i] (f32, at `out`) = <q, row i>, summed in four lanes of
;; f32x4 and the lanes added at the end. Built into f32-dots.wasm by `npm run wasm`
;; (tools/build-wasm.ts); a test holds the two equal.
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
        (br $rows)))))
