# Users and logins (tests/system/unix_users.toml): a user made as an
# administrator's script makes one (Debian's busybox 1.35 has no adduser
# applet), busybox su and passwd, and the refusals a user meets, each
# line judged by its exact output.
echo "s3cret" > /tmp/secret && chmod 600 /tmp/secret
echo 'alice:x:1000:1000:Alice:/home/alice:/bin/sh' >> /etc/passwd
echo 'alice:x:1000:' >> /etc/group
echo 'alice:!:20000:0:99999:7:::' >> /etc/shadow
# bob's password is "pw1" (SHA-512 crypt, as Debian's passwd writes it).
echo 'bob:x:1001:1001:Bob:/tmp:/bin/sh' >> /etc/passwd
echo 'bob:x:1001:' >> /etc/group
echo 'bob:$6$stetsalt$Jx1el5CWnB3bg5zXgjKV.tBFFlAN32PA5YeEQVTfbsj/nOdVJlqUUTgE.Pci8wWIzYsobkok5VKOB8JxbhEJQ.:20000:0:99999:7:::' >> /etc/shadow
mkdir -p /home/alice && chown alice:alice /home/alice && chmod 700 /home/alice
ls -ld /home/alice | awk '{print "home:", $1, $3, $4}'
su alice -c 'id'
su alice -c 'cat /tmp/secret; echo "cat: $?"'
su alice -c 'echo x > /etc/motd; echo "write /etc: $?"'
su alice -c 'kill -0 1; echo "kill 1: $?"'
su alice -c 'cat /etc/shadow > /dev/null; echo "read shadow: $?"'
su alice -c 'cd && touch mine && ls -l mine | awk "{print \"mine:\", \$3, \$4}"'
su alice -c 'ls /home/alice/mine' && echo "root reads alice's home"
# su must be set-user-ID root (busybox gives up the privilege for the
# applets that do not need it).
chmod 4755 /bin/busybox
su alice -c 'id -u; cat /tmp/secret; echo "busybox set-user-ID: cat $?"'
su alice -c 'echo wrong | su -c id bob; echo "su bob, wrong password: $?"'
su alice -c 'echo pw1 | su -c id bob; echo "su bob: $?"'
su alice -c 'kill -0 $$; echo "kill own: $?"'
su alice -c 'echo pw | su -c id root; echo "su root: $?"'
echo "users done"
