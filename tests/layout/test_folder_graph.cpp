// The folders of the source tree form layers: an include from one folder into another is an edge,
// and the graph of folders has no cycle (runtime/util at the bottom, cli/ at the top), so each
// folder can be read, built and tested with only the folders below it. Includes resolve as the
// build resolves them: relative to the including file, then from runtime/, then from the root.
// Each folder is one library (specd_library in the CMakeLists.txt files), whose DEPS must be
// exactly the folders it includes from: the build's graph is the source tree's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The top-level source folders, each with a CMakeLists.txt declaring its libraries.
const char* const kSourceTops[] = {"runtime", "calibrate", "analysis", "serve", "cli", "training"};

struct Edge {
  std::string from_file, include;  // the first include that makes the edge, for the message
};

// folder -> folder it includes from -> the include that shows it
std::map<std::string, std::map<std::string, Edge>> folder_graph(const fs::path& root) {
  std::map<std::string, std::map<std::string, Edge>> graph;
  const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const char* top : kSourceTops) {
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

struct Library {
  std::string name, dir;          // "model", "runtime/model"
  std::set<std::string> deps;     // library names
};

// Every specd_library(<folder> <dir> [OBJECT] [DEPS ...] [LIBS ...] [PCH ...]) call of the build.
std::vector<Library> declared_libraries(const fs::path& root) {
  std::vector<Library> libraries;
  const std::regex call(R"re(specd_library\(([^)]*)\))re");
  for (const char* top : kSourceTops) {
    std::ifstream in(root / top / "CMakeLists.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
      std::istringstream words((*it)[1].str());
      Library library;
      words >> library.name >> library.dir;
      std::string word, section;
      while (words >> word) {
        if (word == "DEPS" || word == "LIBS" || word == "PCH" || word == "OBJECT") section = word;
        else if (section == "DEPS") library.deps.insert(word);
      }
      libraries.push_back(library);
    }
  }
  return libraries;
}

// The library a source folder belongs to: the one whose dir is the folder or holds it.
const Library* library_of(const std::vector<Library>& libraries, const std::string& folder) {
  for (const Library& library : libraries)
    if (folder == library.dir || folder.rfind(library.dir + "/", 0) == 0) return &library;
  return nullptr;
}

// What differs between the libraries' DEPS and the includes, one line each ("" when they match).
std::string dependency_mismatches(const std::map<std::string, std::map<std::string, Edge>>& graph,
                                  const std::vector<Library>& libraries) {
  std::string found;
  std::map<std::string, std::set<std::string>> used;  // library -> libraries it includes from
  for (const auto& [from, edges] : graph) {
    const Library* source = library_of(libraries, from);
    if (!source) {
      found += from + " is in no specd_library\n";
      continue;
    }
    for (const auto& [to, edge] : edges) {
      const Library* target = library_of(libraries, to);
      if (!target || target == source) continue;
      used[source->name].insert(target->name);
      if (!source->deps.count(target->name))
        found += "specd_" + source->name + " lacks DEPS " + target->name + " (" + edge.from_file + " includes \"" + edge.include + "\")\n";
    }
  }
  for (const Library& library : libraries)
    for (const std::string& dep : library.deps)
      if (!used[library.name].count(dep))
        found += "specd_" + library.name + " declares DEPS " + dep + " but includes nothing from " + dep + "\n";
  return found;
}

}  // namespace

TEST_CASE("each folder's library depends on exactly the folders it includes from", "[layout]") {
  const auto libraries = declared_libraries(SPECD_SOURCE_DIR);
  REQUIRE(libraries.size() >= 15);  // the parse found the declarations
  const std::string mismatches = dependency_mismatches(folder_graph(SPECD_SOURCE_DIR), libraries);
  INFO(mismatches);
  CHECK(mismatches.empty());
}

TEST_CASE("the dependency check finds a missing and a stale DEPS entry", "[layout]") {
  std::map<std::string, std::map<std::string, Edge>> graph;
  graph["runtime/a/cpu"]["runtime/b"] = Edge{"runtime/a/cpu/x.cpp", "b/y.h"};
  const std::vector<Library> declared{{"a", "runtime/a", {"c"}}, {"b", "runtime/b", {}}, {"c", "runtime/c", {}}};
  CHECK(dependency_mismatches(graph, declared) ==
        "specd_a lacks DEPS b (runtime/a/cpu/x.cpp includes \"b/y.h\")\n"
        "specd_a declares DEPS c but includes nothing from c\n");
  graph.clear();
  graph["runtime/a"]["runtime/c"] = Edge{"runtime/a/x.cpp", "c/z.h"};
  CHECK(dependency_mismatches(graph, declared).empty());
}

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
