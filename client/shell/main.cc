#include <cstdio>
// Placeholder until the shell is wired to the client library.
int main() {
  std::fputs("mentat-cli: not built yet\n", stderr);
  return 1;
}
