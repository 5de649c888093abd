package calibrate

import "time"

// ChildArg is the reserved argument a null peer's process runs with.
const ChildArg = childArg

// SetPeerExe makes null peers run exe instead of this binary, until the
// returned function restores it.
func SetPeerExe(exe string) (restore func()) {
	old := peerExe
	peerExe = exe
	return func() { peerExe = old }
}

// SetStartBound bounds a null peer's start to d, until the returned
// function restores it.
func SetStartBound(d time.Duration) (restore func()) {
	old := startBound
	startBound = d
	return func() { startBound = old }
}
