// The folders of the source tree form layers: an include from one folder into another is an edge,
// and the graph of folders has no cycle (runtime/util at the bottom, cli/ at the top), so each
// folder can be read, built and tested with only the folders below it. Includes resolve as the
// build resolves them: relative to the including file, then from runtime/, then from the root.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Edge {
  std::string from_file, include;  // the first include that makes the edge, for the message
};

// folder -> folder it includes from -> the include that shows it
std::map<std::string, std::map<std::string, Edge>> folder_graph(const fs::path& root) {
  std::map<std::string, std::map<std::string, Edge>> graph;
  const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const char* top : {"runtime", "calibrate", "analysis", "cli", "training"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      const fs::path folder = entry.path().parent_path();
      const std::string from = fs::relative(folder, root).generic_string();
      std::ifstream in(entry.path());
      std::string line;
      std::smatch m;
      while (std::getline(in, line)) {
        if (!std::regex_search(line, m, include_line)) continue;
        const std::string include = m[1];
        for (const fs::path& candidate : {folder / include, root / "runtime" / include, root / include}) {
          if (!fs::exists(candidate)) continue;
          const std::string to = fs::relative(fs::canonical(candidate).parent_path(), fs::canonical(root)).generic_string();
          if (to != from) graph[from].emplace(to, Edge{fs::relative(entry.path(), root).generic_string(), include});
          break;
        }
      }
    }
  }
  return graph;
}

// One cycle of folders as "a -> b -> a" with the include behind each edge, or "" when none.
std::string find_cycle(const std::map<std::string, std::map<std::string, Edge>>& graph) {
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::string found;
  std::function<bool(const std::string&)> visit = [&](const std::string& folder) {
    state[folder] = 1;
    path.push_back(folder);
    auto edges = graph.find(folder);
    if (edges != graph.end())
      for (const auto& [to, edge] : edges->second) {
        if (state[to] == 1) {
          auto start = std::find(path.begin(), path.end(), to);
          for (auto it = start; it != path.end(); ++it) {
            const std::string& next = it + 1 == path.end() ? to : *(it + 1);
            const Edge& e = graph.at(*it).at(next);
            found += *it + " -> " + next + " (" + e.from_file + " includes \"" + e.include + "\")\n";
          }
          return true;
        }
        if (state[to] == 0 && visit(to)) return true;
      }
    path.pop_back();
    state[folder] = 2;
    return false;
  };
  for (const auto& [folder, edges] : graph)
    if (state[folder] == 0 && visit(folder)) break;
  return found;
}

}  // namespace

TEST_CASE("no include cycle between folders", "[layout]") {
  const auto graph = folder_graph(SPECD_SOURCE_DIR);
  REQUIRE(graph.count("runtime/decode"));  // the walk found the tree
  const std::string cycle = find_cycle(graph);
  INFO("a cycle of folders:\n" << cycle);
  CHECK(cycle.empty());
}

TEST_CASE("the include-graph check finds a planted cycle", "[layout]") {
  std::map<std::string, std::map<std::string, Edge>> graph;
  graph["a"]["b"] = Edge{"a/x.h", "b/y.h"};
  graph["b"]["c"] = Edge{"b/y.h", "c/z.h"};
  CHECK(find_cycle(graph).empty());
  graph["c"]["a"] = Edge{"c/z.h", "a/x.h"};
  CHECK(find_cycle(graph) == "a -> b (a/x.h includes \"b/y.h\")\nb -> c (b/y.h includes \"c/z.h\")\nc -> a (c/z.h includes \"a/x.h\")\n");
}
