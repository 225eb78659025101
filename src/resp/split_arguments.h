// Splits one line into arguments the way Redis splits inline requests and config file lines
// (sdssplitargs): words separated by blanks; "double quotes" with \n \r \t \b \a \\ \" and \xHH
// escapes; 'single quotes' where only \' is special. A closing quote must be followed by a
// blank or the end of the line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

// Replaces `out` with the arguments of `line`; false on unbalanced quotes.
bool split_arguments(std::string_view line, std::vector<std::string>& out);

}  // namespace keywarden
