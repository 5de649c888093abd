package proc

import (
	"errors"
	"unsafe"
)

func unsafePointer[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

func asPinError(err error, pe **PinError) bool { return errors.As(err, pe) }
