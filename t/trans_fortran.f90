! t/trans_fortran.f90 -- Fortran I/O as gfortran's runtime makes it, for
! t/trans_fortran.sh, which runs this program raw and preloaded and
! compares what it prints and the files it leaves.  Each part prints what
! the program sees: direct access (records in strided and random order,
! records never written, past the end, a second open), sequential
! unformatted (backspace, endfile, rewind), formatted read-write and
! append (a child program reads the file after flush), stream access at
! positions, asynchronous writes, and formatted direct access.
program trans_fortran
  implicit none
  call direct_access()
  call sequential()
  call formatted()
  call stream()
  call asynchronous()
  call formatted_direct()
contains

  subroutine direct_access()
    integer :: i, j, u, ios, sz, n
    real(8) :: rec(3), back(3)
    integer :: small(2)
    open(newunit=u, file='direct.dat', access='direct', recl=24, form='unformatted', status='replace')
    do i = 1, 4000        ! strided: every third record, then the ones between
      rec = [(dble(i * 10 + j), j = 1, 3)]
      write(u, rec=mod(i * 3, 4001) + 1) rec
    end do
    do i = 1, 4200, 97
      back = -1
      read(u, rec=i, iostat=ios) back
      print '(a,i0,a,i0,3f9.1)', 'direct rec ', i, ' ios ', merge(0, 1, ios == 0), back
    end do
    inquire(unit=u, size=sz, nextrec=n)
    print '(a,i0,a,i0)', 'direct size ', sz, ' nextrec ', n
    close(u)
    open(newunit=u, file='direct.dat', access='direct', recl=24, form='unformatted', status='old')
    read(u, rec=5000, iostat=ios) back
    print '(a,i0)', 'direct past the end ios /= 0: ', merge(1, 0, ios /= 0)
    write(u, rec=4500) rec
    small = [7, 8]
    write(u, rec=2) small  ! a short record: the rest of it is the runtime's
    read(u, rec=2) small
    inquire(unit=u, size=sz)
    print '(a,2i3,a,i0)', 'direct short record ', small, ' size ', sz
    close(u)
  end subroutine

  subroutine sequential()
    integer :: i, k, u, ios, sz
    integer :: a(40)
    open(newunit=u, file='seq.dat', form='unformatted', status='replace')
    do i = 1, 60
      a = i
      write(u) a(1:mod(i, 13) + 1)
    end do
    rewind(u)
    do i = 1, 12
      read(u) k
    end do
    backspace(u)
    backspace(u)
    read(u) k
    print '(a,i0)', 'sequential after two backspaces ', k
    endfile(u)
    inquire(unit=u, size=sz)
    print '(a,i0)', 'sequential size after endfile ', sz
    rewind(u)
    k = 0
    do
      read(u, iostat=ios) i
      if (ios /= 0) exit
      k = k + 1
    end do
    print '(a,i0,a,i0)', 'sequential records ', k, ' end ios ', ios
    backspace(u)            ! back over the end of file, then a record more
    write(u) 99
    rewind(u)
    do i = 1, k + 1
      read(u) a(1)
    end do
    print '(a,i0)', 'sequential last record ', a(1)
    close(u)
  end subroutine

  subroutine formatted()
    integer :: i, u, n
    character(len=40) :: line
    open(newunit=u, file='text.dat', form='formatted', status='replace', action='readwrite')
    do i = 1, 50
      write(u, '(a,i6)') 'line', i
    end do
    rewind(u)
    read(u, '(a)') line
    print '(2a)', 'formatted first: ', trim(line)
    write(u, '(a)') 'overwritten second line'
    backspace(u)
    read(u, '(a)') line
    print '(2a)', 'formatted second: ', trim(line)
    close(u)                ! the file ends after the line written last
    open(newunit=u, file='text.dat', position='append', status='old', action='write')
    write(u, '(a)') 'appended'
    flush(u)
    call execute_command_line('wc -c < text.dat > seen.dat; tail -c 9 text.dat >> seen.dat')
    close(u)
    open(newunit=u, file='seen.dat', status='old')
    read(u, *) n
    read(u, '(a)') line
    close(u)
    print '(a,i0,2a)', 'formatted the child saw ', n, ' bytes ending ', trim(line)
  end subroutine

  subroutine stream()
    integer :: i, u, k, sz
    open(newunit=u, file='stream.dat', access='stream', form='unformatted', status='replace')
    do i = 1, 3000
      write(u, pos=1 + mod(i * 131, 8001) * 4) i
    end do
    inquire(unit=u, size=sz)
    read(u, pos=1) k
    print '(a,i0,a,i0)', 'stream size ', sz, ' first ', k
    read(u, pos=1 + 131 * 4) k
    print '(a,i0)', 'stream at 525: ', k
    close(u)
  end subroutine

  subroutine asynchronous()
    integer :: i, u, sz
    integer :: id(16)
    integer, asynchronous, allocatable :: buf(:, :)
    integer :: back(2000)
    allocate(buf(2000, 16))
    open(newunit=u, file='async.dat', access='stream', form='unformatted', asynchronous='yes', &
         status='replace')
    do i = 1, 16
      buf(:, i) = i
      write(u, asynchronous='yes', id=id(i), pos=1 + (16 - i) * 8000) buf(:, i)
    end do
    do i = 1, 16
      wait(u, id=id(i))
    end do
    ! every transfer ended and the unit's buffer written: without these,
    ! gfortran's runtime itself sometimes reads the first record back as
    ! zeros (1 run in 6, no ffio), and the raw run is no oracle
    wait(u)
    flush(u)
    inquire(unit=u, size=sz)
    read(u, pos=1) back
    print '(a,i0,a,2i4)', 'asynchronous size ', sz, ' first record ', back(1), back(2000)
    close(u)
  end subroutine

  subroutine formatted_direct()
    integer :: i, u, v
    open(newunit=u, file='fdirect.dat', access='direct', form='formatted', recl=12, status='replace')
    do i = 60, 1, -4
      write(u, '(i12)', rec=i) i * i
    end do
    read(u, '(i12)', rec=4) v
    print '(a,i0)', 'formatted direct rec 4: ', v
    close(u)
  end subroutine
end program
