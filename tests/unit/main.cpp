// Catch2's generated main lives alone in this file so that editing a test file does not
// recompile it.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
