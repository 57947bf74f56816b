# Included at the end of llama.cpp's project() when the embedded judge's llama-cpp-python is built
# (CMAKE_PROJECT_llama.cpp_INCLUDE, given in CMAKE_ARGS by geval/judging/build.py and tests/run.sh).
# llama-cpp-python forces LLAMA_BUILD_COMMON on (a cache variable), which compiles llama.cpp's common
# library: 57 of the build's 140 steps, for the multimodal library alone, which requirements-llama.txt leaves
# out (LLAVA_BUILD=OFF); the Python package never loads it. A normal variable of the same name hides the cache's
# in llama.cpp's directory, so common, its tools and their install rules are left out.
set(LLAMA_BUILD_COMMON OFF)
