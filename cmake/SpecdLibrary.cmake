# specd_library(<folder> <dir> [OBJECT] [DEPS folder...] [LIBS target...] [PCH header...])
#
# One library per source folder: specd_<folder> from every .cpp under <dir> (its subfolders
# included, main.cpp left to the executable). DEPS names the specd folders its files include from
# (specd_<name> each, public: their headers are part of this folder's), LIBS the outside libraries.
# tests/layout/test_folder_graph.cpp checks every DEPS list against the includes, so the build's
# graph is the source tree's. Includes resolve from <dir>'s parent ("artifact/..." for runtime/'s
# folders, "calibrate/..." for the top-level ones). PCH headers are parsed once for the library
# (a precompiled header): for folders where most files include them, the JSON library above all,
# which takes longer to parse and instantiate than most files' own code.
function(specd_library folder dir)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "OBJECT" "" "DEPS;LIBS;PCH")
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.cpp)
  list(FILTER sources EXCLUDE REGEX "/main[.]cpp$")
  if(ARG_OBJECT)
    add_library(specd_${folder} OBJECT ${sources})
  else()
    add_library(specd_${folder} STATIC ${sources})
  endif()
  get_filename_component(include_root ${PROJECT_SOURCE_DIR}/${dir} DIRECTORY)
  target_include_directories(specd_${folder} PUBLIC ${include_root})
  list(TRANSFORM ARG_DEPS PREPEND specd_)
  target_link_libraries(specd_${folder} PUBLIC ${ARG_DEPS} ${ARG_LIBS})
  if(ARG_PCH)
    target_precompile_headers(specd_${folder} PRIVATE ${ARG_PCH})
  endif()
endfunction()
