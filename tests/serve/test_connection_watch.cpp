// A waiting handler learns that its client went away from the socket itself: real TCP connections
// on the loopback, closed, reset, half-closed or sending their next request.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/connection_watch.h"

using specd::serve::ConnectionEnds;
using specd::serve::ConnectionWatch;
using specd::serve::find_connection_socket;

namespace {

int port_of(int fd, bool peer) {
  sockaddr_in address{};
  socklen_t size = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  REQUIRE((peer ? getpeername(fd, raw, &size) : getsockname(fd, raw, &size)) == 0);
  return ntohs(address.sin_port);
}

// A listener, a client connected to it and the accepted server end, all on 127.0.0.1.
struct Connection {
  int listener = -1, client = -1, server = -1;
  Connection() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(listen(listener, 1) == 0);
    address.sin_port = htons(static_cast<uint16_t>(port_of(listener, false)));
    client = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    server = accept(listener, nullptr, nullptr);
    REQUIRE(server >= 0);
  }
  ~Connection() {
    for (int fd : {listener, client, server})
      if (fd >= 0) close(fd);
  }
  // The server end as cpp-httplib's Request names it.
  ConnectionEnds ends() const { return {"127.0.0.1", port_of(server, false), "127.0.0.1", port_of(server, true)}; }
};

// Closing may take a moment to reach the other end of the loopback.
bool gone_soon(ConnectionWatch& watch) {
  for (int i = 0; i < 100; ++i) {
    if (watch.peer_gone()) return true;
    usleep(1000);
  }
  return false;
}

}  // namespace

TEST_CASE("the accepted socket is found by its two ends, and only by both", "[serve]") {
  Connection a, b;
  CHECK(find_connection_socket(a.ends()) == a.server);
  CHECK(find_connection_socket(b.ends()) == b.server);
  ConnectionEnds wrong = a.ends();
  wrong.remote_port = b.ends().remote_port;
  CHECK(find_connection_socket(wrong) == -1);
  wrong = a.ends();
  wrong.local_addr = "::1";
  CHECK(find_connection_socket(wrong) == -1);
}

TEST_CASE("a connected client is not gone, closed, it is", "[serve]") {
  Connection c;
  ConnectionWatch watch(c.ends());
  CHECK_FALSE(watch.peer_gone());
  close(c.client);
  c.client = -1;
  CHECK(gone_soon(watch));
}

TEST_CASE("a client that sends its next request is still there", "[serve]") {
  Connection c;
  ConnectionWatch watch(c.ends());
  REQUIRE(write(c.client, "GET /health HTTP/1.1\r\n", 22) == 22);
  usleep(20000);
  CHECK_FALSE(watch.peer_gone());
  char byte;
  CHECK(recv(c.server, &byte, 1, MSG_DONTWAIT) == 1);  // peeking consumed nothing
}

TEST_CASE("a reset or a half-closed client is gone", "[serve]") {
  Connection reset;
  ConnectionWatch watch(reset.ends());
  linger abort_on_close{1, 0};
  REQUIRE(setsockopt(reset.client, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close) == 0);
  close(reset.client);
  reset.client = -1;
  CHECK(gone_soon(watch));

  Connection half;
  ConnectionWatch half_watch(half.ends());
  shutdown(half.client, SHUT_WR);
  CHECK(gone_soon(half_watch));
}

TEST_CASE("a socket that cannot be found tells nothing", "[serve]") {
  ConnectionWatch watch({"127.0.0.1", 1, "127.0.0.1", 2});
  CHECK_FALSE(watch.peer_gone());
}
