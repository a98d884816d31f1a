#pragma once
// Whether the client of a request is still connected, for a handler that waits for a whole answer.
// cpp-httplib 0.11 (Debian 12) does not give a handler its connection (later versions have
// Request::is_connection_closed), so the socket is found by its two ends: the one socket of this
// process whose local and peer addresses are the request's. It is the request's connection until
// the handler returns (cpp-httplib closes it after), so the descriptor cannot be reused meanwhile.
#include <string>

namespace specd::serve {

struct ConnectionEnds {
  std::string local_addr;   // numeric, as cpp-httplib's Request holds them
  int local_port = -1;
  std::string remote_addr;
  int remote_port = -1;
};

class ConnectionWatch {
 public:
  // Finds the socket now, while it is connected (a reset socket no longer has a peer address).
  explicit ConnectionWatch(const ConnectionEnds& ends);
  // True once the client has closed or reset the connection (an end of stream waiting to be read,
  // or an error on the socket). A client that shut down only its sending side counts as gone, as
  // in later cpp-httplib. False while the socket cannot be found: then nothing is known.
  bool peer_gone();

 private:
  int fd_ = -1;
};

// The descriptor of this process's socket with these ends, or -1.
int find_connection_socket(const ConnectionEnds& ends);

}  // namespace specd::serve
