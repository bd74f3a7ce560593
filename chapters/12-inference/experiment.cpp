// Chapter 12's experiment (being written).
int main() { return 0; }
