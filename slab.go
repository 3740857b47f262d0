package agentloop

// A slab makes interface values of a value type without an allocation per
// value: the values live in a slice allocated for a batch of them, and
// each interface value points at its element (design.md §19.7).
//
// Converting a non-pointer value to an interface copies it to the heap:
// one allocation per value. The Go runtime represents such an interface
// value as a type word and a pointer to an immutable copy of the value; a
// slab makes the same two words, with the pointer into a batch. The values
// are indistinguishable from converted ones (type switches, assertions,
// ==, reflect), as long as an element is never written after it was
// boxed, which a slab guarantees by handing out each element once. The
// price: one value kept alive keeps its batch (and what the batch's values
// point to) alive.

import (
	"fmt"
	"reflect"
	"unsafe"
)

// maxBatch is the number of values a batch holds once a slab has grown.
const maxBatch = 64

// slab boxes values of type T as interface values of type I. T must
// implement I and must not be pointer-shaped (a pointer, map, channel,
// func, or a struct or array of one of them): newSlab panics otherwise. The
// zero slab is not usable; a slab is not safe for concurrent use.
type slab[I any, T any] struct {
	tmpl I   // an I holding a T: its type word is the one every box gets
	free []T // the rest of the current batch
	next int // size of the next batch: 4, 8, … maxBatch
}

// newSlab returns a slab. Batches start small (4 values) and double up to
// maxBatch, so boxing a few values costs about what converting them does.
func newSlab[I any, T any]() *slab[I, T] {
	var zero T
	tmpl, ok := any(zero).(I)
	if !ok {
		panic(fmt.Sprintf("agentloop: boxes: %v does not implement %v", reflect.TypeFor[T](), reflect.TypeFor[I]()))
	}
	if pointerShaped(reflect.TypeFor[T]()) {
		panic(fmt.Sprintf("agentloop: boxes: %v is pointer-shaped", reflect.TypeFor[T]()))
	}
	return &slab[I, T]{tmpl: tmpl, next: 4}
}

// pointerShaped reports whether the runtime stores a t in an interface's
// data word itself rather than behind a pointer.
func pointerShaped(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		if t.NumField() == 1 {
			return pointerShaped(t.Field(0).Type)
		}
		// A struct of one pointer-shaped field and zero-sized ones is
		// pointer-shaped too; any other struct holds more than a word.
		return t.Size() == unsafe.Sizeof(uintptr(0)) && hasPointerShapedField(t)
	case reflect.Array:
		return t.Len() == 1 && pointerShaped(t.Elem())
	}
	return false
}

func hasPointerShapedField(t reflect.Type) bool {
	for i := range t.NumField() {
		if pointerShaped(t.Field(i).Type) {
			return true
		}
	}
	return false
}

// iface is the layout of an interface value: a type (or itab) word and a
// pointer to the value.
type iface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// box returns v as an I, stored in the current batch.
func (s *slab[I, T]) box(v T) I {
	if len(s.free) == 0 {
		s.free = make([]T, s.next)
		s.next = min(2*s.next, maxBatch)
	}
	p := &s.free[0]
	*p = v
	s.free = s.free[1:] // never written again
	out := s.tmpl
	(*iface)(unsafe.Pointer(&out)).data = unsafe.Pointer(p)
	return out
}
