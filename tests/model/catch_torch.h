#pragma once
// Debian's libtorch is built with glog, whose CHECK macro c10 pulls in: included after Catch, it
// silently replaces Catch's CHECK (an abort, not a counted assertion). Including c10 first and
// Catch last keeps Catch's. Every test that touches libtorch includes this, not catch.hpp.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>
