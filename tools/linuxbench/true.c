/* /bin/true for linux_fork_exec_wait: a static musl program that exits 0. */
int main(void)
{
    return 0;
}
