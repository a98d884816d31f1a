#pragma once
// specd runs without libtorch; a command that asks for the ATen forward (--aten, or a CUDA
// --device) is handed to specd-aten beside it, which has the same commands with libtorch linked.

namespace specd::cli {

// When this binary has no ATen forward and argv asks for it, replaces the process with
// specd-aten (same arguments); returns when there is nothing to hand over or no specd-aten, and
// loading the model then says what is missing.
void hand_off_to_aten(int argc, char** argv);

}  // namespace specd::cli
