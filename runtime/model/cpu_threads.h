#pragma once

namespace specd {

// threads, or one per core when threads <= 0.
int resolve_thread_count(int threads);

}  // namespace specd
