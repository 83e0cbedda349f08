// The one translation unit that compiles Beast's non-template code
// (BOOST_BEAST_SEPARATE_COMPILATION is defined project-wide).
#include <boost/beast/src.hpp>
